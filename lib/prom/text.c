/* The exposition format's text layer: names validated, help and label values
 * escaped, numbers in Go's ParseFloat syntax (what Prometheus reads). */
#include "ntlens/prom.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool name_char(char c, bool first, bool colon)
{
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_')
        return true;
    if (colon && c == ':')
        return true;
    return !first && c >= '0' && c <= '9';
}

static bool valid(const char *name, bool colon)
{
    if (!name || !*name)
        return false;
    for (const char *p = name; *p; p++)
        if (!name_char(*p, p == name, colon))
            return false;
    return true;
}

bool ntl_prom_name_valid(const char *name)
{
    return valid(name, true);
}

bool ntl_prom_label_name_valid(const char *name)
{
    return valid(name, false) && strncmp(name, "__", 2) != 0;
}

size_t ntl_prom_sanitize(const char *text, char *buf, size_t size)
{
    size_t n = 0;
    bool gap = false;
    for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
        char c = (char)*p;
        if (c >= 'A' && c <= 'Z')
            c = (char)(c - 'A' + 'a');
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))) {
            gap = n > 0;
            continue;
        }
        if (gap) {
            if (n + 1 < size)
                buf[n] = '_';
            n++;
            gap = false;
        }
        if (n + 1 < size)
            buf[n] = c;
        n++;
    }
    if (size)
        buf[n < size ? n : size - 1] = '\0';
    return n;
}

static int put(struct ntl_buf *out, const char *s, size_t n, struct ntl_error *err)
{
    int rc = ntl_buf_append(out, s, n);
    if (rc == NTL_ERR_LIMIT)
        return ntl_error_set(err, rc, "metrics page", NTL_NO_OFFSET,
                             "page exceeds %zu bytes", out->limit);
    if (rc < 0)
        return ntl_error_set(err, rc, "metrics page", NTL_NO_OFFSET, "out of memory");
    return 0;
}

static int puts_(struct ntl_buf *out, const char *s, struct ntl_error *err)
{
    return put(out, s, strlen(s), err);
}

/* Escapes \ and newline, and " when quoted (label values). */
static int put_escaped(struct ntl_buf *out, const char *s, bool quoted, struct ntl_error *err)
{
    const char *run = s;
    for (const char *p = s;; p++) {
        const char *esc = NULL;
        if (*p == '\\')
            esc = "\\\\";
        else if (*p == '\n')
            esc = "\\n";
        else if (*p == '"' && quoted)
            esc = "\\\"";
        if (!esc && *p)
            continue;
        int rc = put(out, run, (size_t)(p - run), err);
        if (rc < 0 || (rc = esc ? puts_(out, esc, err) : 0) < 0)
            return rc;
        if (!*p)
            return 0;
        run = p + 1;
    }
}

static const char *type_name(enum ntl_prom_type t)
{
    return t == NTL_PROM_GAUGE ? "gauge" : t == NTL_PROM_COUNTER ? "counter" : "untyped";
}

int ntl_prom_family(struct ntl_buf *out, const char *name, const char *help,
                    enum ntl_prom_type type, struct ntl_error *err)
{
    int rc;
    if (!ntl_prom_name_valid(name))
        return ntl_error_set(err, NTL_ERR_ARGUMENT, "metric name", NTL_NO_OFFSET,
                             "invalid metric name");
    if (help && *help) {
        if ((rc = puts_(out, "# HELP ", err)) < 0 || (rc = puts_(out, name, err)) < 0 ||
            (rc = puts_(out, " ", err)) < 0 || (rc = put_escaped(out, help, false, err)) < 0 ||
            (rc = puts_(out, "\n", err)) < 0)
            return rc;
    }
    if ((rc = puts_(out, "# TYPE ", err)) < 0 || (rc = puts_(out, name, err)) < 0 ||
        (rc = puts_(out, " ", err)) < 0 || (rc = puts_(out, type_name(type), err)) < 0)
        return rc;
    return puts_(out, "\n", err);
}

static void format_value(double v, char *buf, size_t size)
{
    if (isnan(v))
        snprintf(buf, size, "NaN");
    else if (isinf(v))
        snprintf(buf, size, v > 0 ? "+Inf" : "-Inf");
    else
        for (int digits = 15; digits <= 17; digits++) {
            /* the fewest digits that read back as v (0.1, not 0.10000000000000001) */
            snprintf(buf, size, "%.*g", digits, v);
            if (strtod(buf, NULL) == v)
                break;
        }
}

int ntl_prom_sample(struct ntl_buf *out, const char *name, const struct ntl_prom_label *labels,
                    size_t nlabels, double value, struct ntl_error *err)
{
    int rc;
    char num[40];
    if (!ntl_prom_name_valid(name))
        return ntl_error_set(err, NTL_ERR_ARGUMENT, "metric name", NTL_NO_OFFSET,
                             "invalid metric name");
    for (size_t i = 0; i < nlabels; i++)
        if (!ntl_prom_label_name_valid(labels[i].name))
            return ntl_error_set(err, NTL_ERR_ARGUMENT, "label name", NTL_NO_OFFSET,
                                 "invalid label name for %s", name);
    if ((rc = puts_(out, name, err)) < 0)
        return rc;
    for (size_t i = 0; i < nlabels; i++) {
        if ((rc = puts_(out, i ? "," : "{", err)) < 0 || (rc = puts_(out, labels[i].name, err)) < 0 || (rc = puts_(out, "=\"", err)) < 0 ||
            (rc = put_escaped(out, labels[i].value ? labels[i].value : "", true, err)) < 0 ||
            (rc = puts_(out, "\"", err)) < 0)
            return rc;
    }
    if (nlabels && (rc = puts_(out, "}", err)) < 0)
        return rc;
    format_value(value, num, sizeof num);
    if ((rc = puts_(out, " ", err)) < 0 || (rc = puts_(out, num, err)) < 0)
        return rc;
    return puts_(out, "\n", err);
}
