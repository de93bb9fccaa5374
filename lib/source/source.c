/* The source handle and the choice of producer from a user's spec. */
#include "ntlens/source.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct ntl_source {
    const struct ntl_source_ops *ops;
    void *impl;
    char description[256];
};

struct ntl_source *ntl_source_new(const struct ntl_source_ops *ops, void *impl,
                                  const char *description)
{
    struct ntl_source *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->ops = ops;
    s->impl = impl;
    strncpy(s->description, description ? description : "", sizeof s->description - 1);
    return s;
}

void *ntl_source_impl(const struct ntl_source *s)
{
    return s->impl;
}

bool ntl_source_spec_is_remote(const char *spec)
{
    return !strncmp(spec, "smb://", 6) || !strncmp(spec, "\\\\", 2);
}

bool ntl_source_is_this_machine(const char *name)
{
    char host[256];
    size_t n;

    if (!name[0] || !strcmp(name, ".") || !strcasecmp(name, "localhost"))
        return true;
    if (ntl_source_local_hostname(host, sizeof host, NULL) < 0)
        return false;
    if (!strcasecmp(name, host))
        return true;
    /* "thishost.example.org" names the machine whose blocks say "thishost" */
    n = strcspn(name, ".");
    return name[n] == '.' && strlen(host) == n && !strncasecmp(name, host, n);
}

int ntl_source_open(const char *spec, const struct ntl_source_options *opt,
                    struct ntl_source **out, struct ntl_error *err)
{
    static const struct ntl_source_options defaults;

    *out = NULL;
    if (!opt)
        opt = &defaults;
    if (!spec || !*spec)
        return ntl_error_set(err, NTL_ERR_ARGUMENT, NULL, NTL_NO_OFFSET, "empty source");
    if (!strcmp(spec, "local"))
        return ntl_source_local_open(opt, out, err);
    if (ntl_source_spec_is_remote(spec))
        return ntl_error_set(err, NTL_ERR_UNSUPPORTED, NULL, NTL_NO_OFFSET,
                             "%s is a remote source (opened by lib/msrpc)", spec);
    return ntl_source_capture_open(spec, opt, out, err);
}

int ntl_source_query(struct ntl_source *s, const char *query, struct ntl_buf *block,
                     struct ntl_error *err)
{
    return s->ops->query(s, query, block, err);
}

int ntl_source_titles(struct ntl_source *s, enum ntl_title_kind kind, unsigned langid,
                      struct ntl_buf *out, struct ntl_error *err)
{
    return s->ops->titles(s, kind, langid, out, err);
}

size_t ntl_source_snapshot_count(const struct ntl_source *s)
{
    return s->ops->snapshot_count ? s->ops->snapshot_count(s) : 0;
}

bool ntl_source_is_live(const struct ntl_source *s)
{
    return s->ops->snapshot_count == NULL;
}

const char *ntl_source_describe(const struct ntl_source *s)
{
    return s->description;
}

void ntl_source_close(struct ntl_source *s)
{
    if (!s)
        return;
    if (s->ops->close)
        s->ops->close(s);
    free(s);
}
