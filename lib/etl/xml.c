/* The bounded XML reader of xml.h. */
#include "xml.h"

#include <stdint.h>
#include <string.h>

void xml_init(struct xml *x, const char *s, size_t size)
{
    memset(x, 0, sizeof *x);
    x->s = s;
    x->size = size;
}

unsigned xml_line(const struct xml *x, size_t offset)
{
    unsigned line = 1;
    for (size_t i = 0; i < offset && i < x->size; i++)
        line += x->s[i] == '\n';
    return line;
}

static int fail(struct xml *x, struct ntl_error *err, int status, size_t at, const char *what)
{
    return ntl_error_set(err, status, "manifest XML", at, "line %u: %s", xml_line(x, at), what);
}

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

static bool is_name(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == ':' || c == '-' || c == '.' || (unsigned char)c >= 0x80;
}

/* Skips to just after `end` (a comment's "-->", a PI's "?>"); false when absent. */
static bool skip_past(struct xml *x, const char *end)
{
    size_t n = strlen(end);
    for (size_t i = x->pos; i + n <= x->size; i++)
        if (!memcmp(x->s + i, end, n)) {
            x->pos = i + n;
            return true;
        }
    return false;
}

static size_t name_at(const struct xml *x, size_t pos)
{
    size_t n = 0;
    while (pos + n < x->size && is_name(x->s[pos + n]))
        n++;
    return n;
}

static void skip_space(struct xml *x)
{
    while (x->pos < x->size && is_space(x->s[x->pos]))
        x->pos++;
}

static int attributes(struct xml *x, struct ntl_error *err)
{
    for (;;) {
        skip_space(x);
        if (x->pos >= x->size)
            return fail(x, err, NTL_ERR_TRUNCATED, x->tag_offset, "tag not closed");
        if (x->s[x->pos] == '>') {
            x->pos++;
            return 0;
        }
        if (x->s[x->pos] == '/' && x->pos + 1 < x->size && x->s[x->pos + 1] == '>') {
            x->pos += 2;
            x->empty = true;
            return 0;
        }
        struct xml_attr *a = &x->attr[x->nattr];
        size_t n = name_at(x, x->pos);
        if (!n)
            return fail(x, err, NTL_ERR_FORMAT, x->pos, "expected an attribute name");
        if (x->nattr == XML_MAX_ATTRS)
            return fail(x, err, NTL_ERR_LIMIT, x->pos, "more than 32 attributes");
        a->name = x->s + x->pos;
        a->name_len = n;
        x->pos += n;
        skip_space(x);
        if (x->pos >= x->size || x->s[x->pos] != '=')
            return fail(x, err, NTL_ERR_FORMAT, x->pos, "expected '=' after an attribute name");
        x->pos++;
        skip_space(x);
        char q = x->pos < x->size ? x->s[x->pos] : 0;
        if (q != '"' && q != '\'')
            return fail(x, err, NTL_ERR_FORMAT, x->pos, "expected a quoted attribute value");
        const char *end = memchr(x->s + x->pos + 1, q, x->size - x->pos - 1);
        if (!end)
            return fail(x, err, NTL_ERR_TRUNCATED, x->pos, "attribute value not closed");
        a->value = x->s + x->pos + 1;
        a->value_len = (size_t)(end - a->value);
        x->pos = (size_t)(end - x->s) + 1;
        x->nattr++;
    }
}

/* Drops a namespace prefix: "win:event" -> "event". */
static void local_name(const char **s, size_t *n)
{
    const char *c = memchr(*s, ':', *n);
    if (c) {
        *n -= (size_t)(c + 1 - *s);
        *s = c + 1;
    }
}

static int end_tag(struct xml *x, struct ntl_error *err)
{
    size_t n = name_at(x, x->pos + 2);
    const char *name = x->s + x->pos + 2;
    x->pos += 2 + n;
    skip_space(x);
    if (x->pos >= x->size || x->s[x->pos] != '>')
        return fail(x, err, NTL_ERR_FORMAT, x->tag_offset, "bad end tag");
    x->pos++;
    local_name(&name, &n);
    if (!x->depth || x->open[x->depth - 1].len != n || memcmp(x->open[x->depth - 1].name, name, n))
        return fail(x, err, NTL_ERR_FORMAT, x->tag_offset, "end tag does not match the open element");
    x->depth--;
    x->end = true;
    x->name = name;
    x->name_len = n;
    return 1;
}

static int start_tag(struct xml *x, struct ntl_error *err)
{
    size_t n = name_at(x, x->pos + 1);
    int rc;
    if (!n)
        return fail(x, err, NTL_ERR_FORMAT, x->pos, "expected an element name after '<'");
    x->name = x->s + x->pos + 1;
    x->name_len = n;
    local_name(&x->name, &x->name_len);
    x->pos += 1 + n;
    if ((rc = attributes(x, err)) < 0)
        return rc;
    if (!x->empty) {
        if (x->depth == XML_MAX_DEPTH)
            return fail(x, err, NTL_ERR_LIMIT, x->tag_offset, "elements nest deeper than 64");
        x->open[x->depth].name = x->name;
        x->open[x->depth].len = x->name_len;
        x->depth++;
    }
    return 1;
}

int xml_next(struct xml *x, struct ntl_error *err)
{
    for (;;) {
        const char *lt = x->pos < x->size ? memchr(x->s + x->pos, '<', x->size - x->pos) : NULL;
        if (!lt) {
            if (x->depth)
                return fail(x, err, NTL_ERR_TRUNCATED, x->size, "input ends inside an element");
            return 0;
        }
        x->pos = (size_t)(lt - x->s);
        x->tag_offset = x->pos;
        x->end = x->empty = false;
        x->nattr = 0;
        size_t left = x->size - x->pos;
        if (left >= 4 && !memcmp(lt, "<!--", 4)) {
            if (!skip_past(x, "-->"))
                return fail(x, err, NTL_ERR_TRUNCATED, x->tag_offset, "comment not closed");
        } else if (left >= 9 && !memcmp(lt, "<![CDATA[", 9)) {
            if (!skip_past(x, "]]>"))
                return fail(x, err, NTL_ERR_TRUNCATED, x->tag_offset, "CDATA not closed");
        } else if (left >= 2 && (lt[1] == '?' || lt[1] == '!')) {
            if (!skip_past(x, lt[1] == '?' ? "?>" : ">"))
                return fail(x, err, NTL_ERR_TRUNCATED, x->tag_offset, "declaration not closed");
        } else if (left >= 2 && lt[1] == '/') {
            return end_tag(x, err);
        } else {
            return start_tag(x, err);
        }
    }
}

bool xml_is(const struct xml *x, const char *name)
{
    size_t n = strlen(name);
    return x->name_len == n && !memcmp(x->name, name, n);
}

const struct xml_attr *xml_attr(const struct xml *x, const char *name)
{
    size_t n = strlen(name);
    for (size_t i = 0; i < x->nattr; i++)
        if (x->attr[i].name_len == n && !memcmp(x->attr[i].name, name, n))
            return &x->attr[i];
    return NULL;
}

/* A code point as UTF-8 at p; its length, 0 when invalid. */
static size_t utf8(uint32_t c, char *p)
{
    if (!c || (c >= 0xD800 && c < 0xE000) || c > 0x10FFFF)
        return 0;
    if (c < 0x80)
        return p[0] = (char)c, 1;
    if (c < 0x800)
        return p[0] = (char)(0xC0 | c >> 6), p[1] = (char)(0x80 | (c & 63)), 2;
    if (c < 0x10000)
        return p[0] = (char)(0xE0 | c >> 12), p[1] = (char)(0x80 | (c >> 6 & 63)),
               p[2] = (char)(0x80 | (c & 63)), 3;
    return p[0] = (char)(0xF0 | c >> 18), p[1] = (char)(0x80 | (c >> 12 & 63)),
           p[2] = (char)(0x80 | (c >> 6 & 63)), p[3] = (char)(0x80 | (c & 63)), 4;
}

/* One reference at v[i] ('&' .. ';') into out; its source length, 0 if bad.
 * A character reference is never longer in UTF-8 than its source text. */
static size_t reference(const char *v, size_t n, char *out, size_t *len)
{
    static const struct { const char *name; char c; } named[] = {
        {"lt", '<'}, {"gt", '>'}, {"amp", '&'}, {"quot", '"'}, {"apos", '\''},
    };
    const char *semi = memchr(v, ';', n < 12 ? n : 12);
    size_t k = semi ? (size_t)(semi - v) : 0;
    if (k < 3)
        return 0;
    for (size_t i = 0; i < sizeof named / sizeof named[0]; i++)
        if (strlen(named[i].name) == k - 1 && !memcmp(v + 1, named[i].name, k - 1)) {
            *out = named[i].c;
            *len = 1;
            return k + 1;
        }
    if (v[1] != '#')
        return 0;
    uint32_t c = 0;
    bool hex = v[2] == 'x';
    size_t i = hex ? 3 : 2;
    if (i >= k)
        return 0;
    for (; i < k; i++) {
        char d = v[i];
        int digit = d >= '0' && d <= '9' ? d - '0'
                    : hex && d >= 'a' && d <= 'f' ? d - 'a' + 10
                    : hex && d >= 'A' && d <= 'F' ? d - 'A' + 10 : -1;
        if (digit < 0 || c > 0x10FFFF)
            return 0;
        c = c * (hex ? 16 : 10) + (uint32_t)digit;
    }
    return (*len = utf8(c, out)) ? k + 1 : 0;
}

char *xml_value(const struct xml_attr *a, char *buf, size_t size)
{
    size_t o = 0;
    if (size < a->value_len + 1)
        return NULL;
    for (size_t i = 0; i < a->value_len;) {
        if (a->value[i] != '&') {
            buf[o++] = a->value[i++];
            continue;
        }
        size_t len, used = reference(a->value + i, a->value_len - i, buf + o, &len);
        if (!used)
            return NULL;
        i += used;
        o += len;
    }
    buf[o] = '\0';
    return buf;
}
