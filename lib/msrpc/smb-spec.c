/* smb://[DOMAIN;]USER@HOST[:PORT] (RFC-style smb URL, %XX escapes in the
 * user part) and PsList's \\HOST. */
#include "smb-spec.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int hexval(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    c = tolower(c);
    return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* Copies [s, s+n) into dst, decoding %XX. */
static int unescape(char *dst, size_t size, const char *s, size_t n, const char *what,
                    struct ntl_error *err)
{
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        int c = (unsigned char)s[i];
        if (c == '%') {
            int hi = i + 1 < n ? hexval(s[i + 1]) : -1;
            int lo = i + 2 < n ? hexval(s[i + 2]) : -1;
            if (hi < 0 || lo < 0)
                return ntl_error_set(err, NTL_ERR_ARGUMENT, NULL, NTL_NO_OFFSET,
                                     "bad %%-escape in the %s of the source", what);
            c = hi * 16 + lo;
            i += 2;
        }
        if (o + 1 >= size)
            return ntl_error_set(err, NTL_ERR_ARGUMENT, NULL, NTL_NO_OFFSET,
                                 "the %s of the source is too long", what);
        dst[o++] = (char)c;
    }
    dst[o] = '\0';
    return 0;
}

static int parse_host(const char *h, size_t n, struct ntl_smb_spec *s, struct ntl_error *err)
{
    const char *const end = h + n;
    const char *port = NULL;
    size_t hn = n;

    if (n && h[0] == '[') {
        const char *close = memchr(h, ']', n);
        if (!close)
            return ntl_error_set(err, NTL_ERR_ARGUMENT, NULL, NTL_NO_OFFSET,
                                 "unterminated [ in the host of the source");
        if ((size_t)(close - h) + 1 < n) {
            if (close[1] != ':')
                return ntl_error_set(err, NTL_ERR_ARGUMENT, NULL, NTL_NO_OFFSET,
                                     "expected :PORT after ]");
            port = close + 2;
        }
        h++;
        hn = (size_t)(close - h);
    } else {
        const char *colon = memchr(h, ':', n);
        if (colon) {
            port = colon + 1;
            hn = (size_t)(colon - h);
        }
    }
    if (hn == 0 || hn >= sizeof s->host)
        return ntl_error_set(err, NTL_ERR_ARGUMENT, NULL, NTL_NO_OFFSET,
                             hn ? "host name too long" : "the source names no host");
    memcpy(s->host, h, hn);
    s->host[hn] = '\0';
    for (size_t i = 0; i < hn; i++)
        if (strchr("/\\@;%? \t", s->host[i]))
            return ntl_error_set(err, NTL_ERR_ARGUMENT, NULL, NTL_NO_OFFSET,
                                 "invalid character '%c' in host '%s'", s->host[i], s->host);
    if (port) {
        size_t pn = (size_t)(end - port);
        char digits[8];
        char *stop;
        unsigned long v;
        if (pn == 0 || pn >= sizeof digits)
            return ntl_error_set(err, NTL_ERR_ARGUMENT, NULL, NTL_NO_OFFSET,
                                 "invalid port in the source");
        memcpy(digits, port, pn);
        digits[pn] = '\0';
        v = strtoul(digits, &stop, 10);
        if (*stop || !isdigit((unsigned char)digits[0]) || v == 0 || v > 65535)
            return ntl_error_set(err, NTL_ERR_ARGUMENT, NULL, NTL_NO_OFFSET,
                                 "invalid port '%s' in the source", digits);
        s->port = (uint16_t)v;
    }
    return 0;
}

int ntl_smb_spec_parse(const char *spec, struct ntl_smb_spec *s, struct ntl_error *err)
{
    const char *rest, *at, *end;
    int rc;

    memset(s, 0, sizeof *s);
    if (!strncmp(spec, "\\\\", 2)) {
        rest = spec + 2;
        end = rest + strcspn(rest, "\\");
        if (*end && end[1])
            return ntl_error_set(err, NTL_ERR_ARGUMENT, NULL, NTL_NO_OFFSET,
                                 "\\\\HOST takes no path after the host");
        return parse_host(rest, (size_t)(end - rest), s, err);
    }
    if (strncmp(spec, "smb://", 6))
        return ntl_error_set(err, NTL_ERR_ARGUMENT, NULL, NTL_NO_OFFSET,
                             "a remote source is smb://[DOMAIN;]USER@HOST[:PORT] or \\\\HOST");
    rest = spec + 6;
    end = rest + strcspn(rest, "/?#");
    if (*end && !(end[0] == '/' && end[1] == '\0'))
        return ntl_error_set(err, NTL_ERR_ARGUMENT, NULL, NTL_NO_OFFSET,
                             "smb:// sources take no path (got '%s')", end);
    at = NULL;
    for (const char *q = rest; q < end; q++)
        if (*q == '@')
            at = q;
    if (at) {
        const char *semi = memchr(rest, ';', (size_t)(at - rest));
        const char *user = rest;
        if (memchr(rest, ':', (size_t)(at - rest)))
            return ntl_error_set(err, NTL_ERR_ARGUMENT, NULL, NTL_NO_OFFSET,
                                 "passwords are never taken from the source: use a prompt, "
                                 "NTLENS_PASSWORD or -A FILE");
        if (semi) {
            if ((rc = unescape(s->domain, sizeof s->domain, rest, (size_t)(semi - rest),
                               "domain", err)) < 0)
                return rc;
            user = semi + 1;
        }
        if ((rc = unescape(s->user, sizeof s->user, user, (size_t)(at - user), "user", err)) < 0)
            return rc;
        rest = at + 1;
    }
    return parse_host(rest, (size_t)(end - rest), s, err);
}

void ntl_smb_spec_describe(const struct ntl_smb_spec *s, const char *user, const char *domain,
                           char *buf, size_t size)
{
    bool v6 = strchr(s->host, ':') != NULL;
    char port[8] = "";
    if (s->port)
        snprintf(port, sizeof port, ":%u", s->port);
    snprintf(buf, size, "smb://%s%s%s%s%s%s%s%s", domain && *domain ? domain : "",
             domain && *domain ? ";" : "", user && *user ? user : "", user && *user ? "@" : "",
             v6 ? "[" : "", s->host, v6 ? "]" : "", port);
}
