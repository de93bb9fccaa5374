/* Writes Samba's perfmon store with libtdb: both databases are built as
 * new files and renamed into place, data.tdb first, so smbd (which opens
 * them afresh for every answer) never sees a half-written database. */
#include "ntlens/msrpc.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <tdb.h>
#include <unistd.h>

struct writer {
    TDB_CONTEXT *db[2];
    const char *path[2];
};

static int put(void *ctx, enum ntl_samba_db which, const char *key, const void *value,
               size_t len, struct ntl_error *err)
{
    struct writer *w = ctx;
    TDB_DATA k = {(unsigned char *)key, strlen(key)};
    TDB_DATA v = {(unsigned char *)value, len};
    if (tdb_store(w->db[which], k, v, TDB_REPLACE) != 0)
        return ntl_error_set(err, NTL_ERR_IO, NULL, NTL_NO_OFFSET, "writing %s: %s",
                             w->path[which], tdb_errorstr(w->db[which]));
    return NTL_OK;
}

int ntl_samba_perfmon_write(const char *state_dir, const struct ntl_perf_block *b,
                            const struct ntl_perf_titles *t, struct ntl_samba_perfmon_stats *st,
                            struct ntl_error *err)
{
    static const char *const names[2] = {"names.tdb", "data.tdb"};
    char dir[4096], tmp[2][4200], final[2][4200];
    struct writer w = {{NULL, NULL}, {tmp[0], tmp[1]}};
    int rc = NTL_OK;

    snprintf(dir, sizeof dir, "%s/perfmon", state_dir);
    if (mkdir(dir, 0755) != 0 && errno != EEXIST)
        return ntl_error_set(err, NTL_ERR_IO, NULL, NTL_NO_OFFSET, "cannot create %s: %s", dir,
                             strerror(errno));
    for (int i = 0; i < 2; i++) {
        snprintf(final[i], sizeof final[i], "%s/%s", dir, names[i]);
        snprintf(tmp[i], sizeof tmp[i], "%s/.%s.%ld", dir, names[i], (long)getpid());
        unlink(tmp[i]);
        /* A private new file: no locking needed until it is renamed. */
        w.db[i] = tdb_open(tmp[i], 4099, TDB_NOLOCK, O_RDWR | O_CREAT | O_EXCL, 0644);
        if (!w.db[i]) {
            rc = ntl_error_set(err, NTL_ERR_IO, NULL, NTL_NO_OFFSET, "cannot create %s: %s",
                               tmp[i], strerror(errno));
            break;
        }
    }
    if (rc >= 0)
        rc = ntl_samba_perfmon_records(b, t, put, &w, st, err);
    for (int i = 0; i < 2; i++)
        if (w.db[i] && tdb_close(w.db[i]) != 0 && rc >= 0)
            rc = ntl_error_set(err, NTL_ERR_IO, NULL, NTL_NO_OFFSET, "closing %s failed",
                               tmp[i]);
    for (int i = 1; i >= 0 && rc >= 0; i--)
        if (rename(tmp[i], final[i]) != 0)
            rc = ntl_error_set(err, NTL_ERR_IO, NULL, NTL_NO_OFFSET, "cannot rename %s to %s: %s",
                               tmp[i], final[i], strerror(errno));
    if (rc < 0) {
        unlink(tmp[0]);
        unlink(tmp[1]);
    }
    return rc;
}
