/* ntlens format: a value copied out of a trace viewer, formatted as ntlens
 * formats it in event fields: a TOKEN_ACCESS_INFORMATION blob, a SID, a
 * GUID, a FILETIME. Input as hex text (spaces, newlines and a 0x prefix
 * allowed) or, for a token from a file, raw bytes. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "etl-common.h"
#include "ntlens/etl.h"
#include "ntlens/etl_fields.h"
#include "ntlens/etl_token.h"

#define INPUT_MAX (1u << 20)

static const struct opt_command format_command = {
    .name = "format",
    .synopsis = "token FILE|-  |  sid HEX  |  guid HEX  |  filetime NUMBER",
    .summary = "format a token blob, SID, GUID or FILETIME as event fields show them",
    .description =
        "Format a value copied out of any trace viewer. token: a self-relative\n"
        "TOKEN_ACCESS_INFORMATION (as the Windows Filtering Platform logs it), read\n"
        "from FILE or standard input as hex text or raw bytes: each SID of the SID\n"
        "hash with its attributes, the restricted SIDs, privileges with their LUIDs\n"
        "and attributes, the authentication id, token type, impersonation level,\n"
        "mandatory policy by name, flags, app container number, package SID,\n"
        "capability SIDs, trust level SID and where the security attributes are.\n"
        "Every offset in the blob is checked against its length. sid: the bytes of\n"
        "a SID as hex; guid: 16 bytes as hex; filetime: 100 ns since 1601 (decimal\n"
        "or 0x hex).",
};

/* Hex text (whitespace and 0x prefixes skipped) into bytes; false if not hex. */
static bool from_hex(const char *s, size_t n, uint8_t *out, size_t *len)
{
    int hi = -1;
    *len = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (isspace(c) || c == ',' || c == '-')
            continue;
        if (c == '0' && i + 1 < n && (s[i + 1] == 'x' || s[i + 1] == 'X') && hi < 0) {
            i++;
            continue;
        }
        if (!isxdigit(c))
            return false;
        int v = isdigit(c) ? c - '0' : tolower(c) - 'a' + 10;
        if (hi < 0)
            hi = v;
        else
            out[(*len)++] = (uint8_t)(hi << 4 | v), hi = -1;
    }
    return hi < 0;
}

static int read_input(const char *cmd, const char *path, uint8_t **data, size_t *len)
{
    FILE *f = strcmp(path, "-") ? fopen(path, "rb") : stdin;
    uint8_t *buf = malloc(INPUT_MAX + 1);
    size_t n;
    if (!f || !buf) {
        free(buf);
        return f ? cli_failf(cmd, "out of memory") : cli_failf(cmd, "%s: cannot open", path);
    }
    n = fread(buf, 1, INPUT_MAX + 1, f);
    if (f != stdin)
        fclose(f);
    if (n > INPUT_MAX) {
        free(buf);
        return cli_failf(cmd, "%s: more than %u bytes", path, INPUT_MAX);
    }
    /* Hex text becomes bytes in place; anything else is the blob itself. */
    if (!from_hex((const char *)buf, n, buf, len))
        *len = n;
    *data = buf;
    return 0;
}

struct rows {
    struct out *o;
};

static int token_row(void *ctx, const struct ntl_token_item *it)
{
    struct out *o = ((struct rows *)ctx)->o;
    out_str(o, it->field);
    out_u64(o, it->index);
    if (it->has_attributes)
        out_addr(o, it->attributes, 8);
    else
        out_null(o);
    out_addr(o, it->offset, 1);
    out_str(o, it->value);
    return out_row_end(o) < 0 ? -1 : 0;
}

static int format_token(const char *cmd, struct out *o, const char *path, unsigned psz)
{
    struct rows r = {o};
    struct ntl_error err = {0};
    uint8_t *blob = NULL;
    size_t len = 0;
    int rc = read_input(cmd, path, &blob, &len);
    if (rc)
        return rc;
    rc = ntl_token_walk(blob, len, psz, token_row, &r, &err);
    free(blob);
    if (rc < 0 && err.status)
        return cli_fail(cmd, &err, path);
    return rc ? EXIT_FAIL : EXIT_OK;
}

/* sid, guid, filetime as text in buf; NULL when arg is not one. */
static const char *value_text(const char *what, const char *arg, char *text, size_t size)
{
    uint8_t b[64];
    size_t n;
    char *end;
    if (!strcmp(what, "filetime")) {
        unsigned long long ft = strtoull(arg, &end, 0);
        return *arg && !*end && *arg != '-' ? ntl_filetime_format(ft, text, size) : NULL;
    }
    if (strlen(arg) >= 2 * sizeof b || !from_hex(arg, strlen(arg), b, &n))
        return NULL;
    if (!strcmp(what, "sid"))
        return ntl_sid_format(b, n, text, size);
    return n == 16 ? ntl_guid_format((const struct ntl_guid *)b, text, size) : NULL;
}

static void value_row(struct out *o, const char *what, const char *v)
{
    out_str(o, what);
    out_u64(o, 0);
    out_null(o);
    out_null(o);
    out_str(o, v);
    out_row_end(o);
}

int cmd_format(int argc, char **argv)
{
    int fmt = OUT_TABLE, rc;
    uint64_t psz = 8;
    struct out *o;
    struct opt opts[] = {
        OPT_U64(0, "pointer-size", &psz, "BYTES", 4, 8,
                "token: the pointer size of the system that wrote it (4 or 8; default 8)"),
        OPT_OUTPUT_OPTIONS(&fmt),
        OPT_END(),
    };
    int n = parse_options(&format_command, opts, argc, argv);
    if (n < 0)
        return parse_options_exit(n);
    if (n != 2 || (strcmp(argv[1], "token") && strcmp(argv[1], "sid") && strcmp(argv[1], "guid") &&
                   strcmp(argv[1], "filetime")))
        return opt_usage_error(&format_command, "expected token FILE|-, sid HEX, guid HEX or filetime NUMBER");
    if (psz != 4 && psz != 8)
        return opt_usage_error(&format_command, "--pointer-size is 4 or 8, not %u", (unsigned)psz);
    char text[160];
    const char *v = NULL;
    bool token = !strcmp(argv[1], "token");
    if (!token && !(v = value_text(argv[1], argv[2], text, sizeof text)))
        return cli_failf(argv[0], "'%s' is not a %s", argv[2], argv[1]);
    if (!(o = out_new(stdout, (enum out_format)fmt)))
        return cli_failf(argv[0], "out of memory");
    out_column(o, "field", NULL, OUT_LEFT);
    out_column(o, "index", NULL, OUT_RIGHT);
    out_column(o, "attributes", NULL, OUT_LEFT);
    out_column(o, "offset", NULL, OUT_LEFT);
    out_column(o, "value", NULL, OUT_LEFT);
    rc = EXIT_OK;
    if (token)
        rc = format_token(argv[0], o, argv[2], (unsigned)psz);
    else
        value_row(o, argv[1], v);
    if (out_close(o) < 0 && rc == EXIT_OK)
        rc = cli_failf(argv[0], "write error");
    return rc;
}
