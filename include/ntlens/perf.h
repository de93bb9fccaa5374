/* Windows performance data: the title database ("Counter <lang>" / "Help
 * <lang>") and the PERF_DATA_BLOCK parser (WinPerf.h).
 *
 * Layers (each usable on its own):
 *   titles  - index <-> name and help text, O(1) both ways, any language,
 *             with Windows' standard English names as a fallback;
 *   block   - a validated, indexed view of one PERF_DATA_BLOCK answer:
 *             objects, counter definitions, instances (with "#N" for
 *             same-named ones and resolved parents), counter blocks;
 *   values  - raw counter samples and PDH's formulas: ntlens/perf_value.h.
 *
 * Every input is untrusted. Parsers never read outside the bytes they are
 * given, allocate only in proportion to the input size, and report failures
 * through struct ntl_error with the structure name and absolute byte offset.
 *
 * Status contract of ntl_perf_block_parse (remote sources rely on it):
 *   NTL_ERR_TRUNCATED  the answer is incomplete: the header claims more bytes
 *                      than were received, or it is Samba's answer to an
 *                      undersized buffer (valid header, zeros after it).
 *                      Retrying with a larger buffer may succeed;
 *                      ntl_perf_block_classify() tells the two apart.
 *   NTL_ERR_FORMAT     anything else malformed (also Wine's misplaced
 *                      provider data). Retrying will not help.
 *   NTL_ERR_NOMEM / NTL_ERR_LIMIT  resource limits. */
#ifndef NTLENS_PERF_H
#define NTLENS_PERF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ntlens/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------
 * Title database
 * ------------------------------------------------------------------------ */

/* Language ids as the registry names them: "Counter 009" is English. */
#define NTL_PERF_LANG_ENGLISH 0x009

/* Detail levels (PERF_DETAIL_*). */
#define NTL_PERF_DETAIL_NOVICE 100
#define NTL_PERF_DETAIL_ADVANCED 200
#define NTL_PERF_DETAIL_EXPERT 300
#define NTL_PERF_DETAIL_WIZARD 400

/* Cap on title indices a database accepts (Windows uses < 20,000 on a busy
 * server; the cap bounds the index array for hostile input). */
#define NTL_PERF_TITLES_MAX_INDEX (1u << 22)

struct ntl_perf_titles;

/* An empty database. NULL when out of memory. */
struct ntl_perf_titles *ntl_perf_titles_new(void);
void ntl_perf_titles_free(struct ntl_perf_titles *t);

/* Adds one raw answer to QueryValue("Counter <lang>") (help = false) or
 * ("Help <lang>" / Samba's "Explain <lang>") (help = true): UTF-16LE
 * MULTI_SZ pairs "index\0text\0", whatever registry type the server gave
 * (REG_MULTI_SZ or, as Samba does, REG_BINARY). The first counter pair
 * (1, last index) is the database size, not a name: it sets last_index.
 * Help entries are stored under their own index (counter index + 1).
 * Later entries for an index replace earlier ones. An odd byte count, a
 * non-numeric index, an index of 0 or above NTL_PERF_TITLES_MAX_INDEX, or an
 * answer with no pair at all is NTL_ERR_FORMAT naming the byte offset;
 * a missing final terminator is tolerated for the last string only. */
int ntl_perf_titles_add(struct ntl_perf_titles *t, bool help, const void *data, size_t size,
                        struct ntl_error *err);

/* Sets one entry (UTF-8 text, copied). For builders and the fallback. */
int ntl_perf_titles_set(struct ntl_perf_titles *t, bool help, uint32_t index, const char *text);

/* Fills every index this database lacks from Windows' standard English
 * table (ntl_perf_std_titles): System 2, Memory 4, Process 230, Thread 232,
 * Processor 238, ID Process 784, Creating Process ID 1410, their counters and
 * help. Entries the source gave are never replaced. */
int ntl_perf_titles_add_standard(struct ntl_perf_titles *t);

/* Name of a counter/object index, or NULL when unknown. */
const char *ntl_perf_titles_name(const struct ntl_perf_titles *t, uint32_t index);
/* Help text stored under help_index (a counter's or object's HelpTitleIndex,
 * normally its name index + 1), or NULL. */
const char *ntl_perf_titles_help(const struct ntl_perf_titles *t, uint32_t help_index);

/* Index of a name, case-insensitive (ASCII and Latin-1 folding), O(1).
 * Several indices may carry the same name ("% Processor Time" is 6 for both
 * Process and Processor); this returns the lowest. NTL_ERR_NOT_FOUND when
 * absent. */
int ntl_perf_titles_find(const struct ntl_perf_titles *t, const char *name, uint32_t *index);
/* Every index named `name`, ascending; returns how many exist (may exceed
 * max, only max are stored). */
size_t ntl_perf_titles_find_all(const struct ntl_perf_titles *t, const char *name,
                                uint32_t *indices, size_t max);

/* The "last index" the first counter pair announced (0 when none), and the
 * highest index actually stored. */
uint32_t ntl_perf_titles_last_index(const struct ntl_perf_titles *t);
uint32_t ntl_perf_titles_max_index(const struct ntl_perf_titles *t);
/* Number of names / help texts stored. */
size_t ntl_perf_titles_count(const struct ntl_perf_titles *t, bool help);

/* Serialises the names (help = false) or help texts as a Windows answer
 * would be: UTF-16LE MULTI_SZ, ascending indices, the (1, last index) pair
 * first for names, and a final empty string. out must be initialised
 * (ntlens/buf.h); bytes are appended. 0; NTL_ERR_LIMIT (nothing appended)
 * when an index is out of proportion to the encoding's size, which
 * ntl_perf_titles_add would refuse; NTL_ERR_NOMEM. */
struct ntl_buf;
int ntl_perf_titles_encode(const struct ntl_perf_titles *t, bool help, struct ntl_buf *out,
                           struct ntl_error *err);

/* Windows' standard English titles (as on Windows 10/Server 2019, for the
 * objects ntlens uses), ascending by index. help is the help text of the
 * entry with index help_index = index + 1. */
struct ntl_perf_std_title {
    uint32_t index;
    const char *name;
    const char *help;
};
const struct ntl_perf_std_title *ntl_perf_std_titles(size_t *count);

/* Windows' standard indices the CLI and the providers refer to. */
enum {
    NTL_PERF_IDX_SYSTEM = 2,
    NTL_PERF_IDX_MEMORY = 4,
    NTL_PERF_IDX_PROCESS = 230,
    NTL_PERF_IDX_THREAD = 232,
    NTL_PERF_IDX_PROCESSOR = 238,
    NTL_PERF_IDX_ID_PROCESS = 784,
    NTL_PERF_IDX_ID_THREAD = 804,
    NTL_PERF_IDX_CREATING_PROCESS_ID = 1410,
};

/* ------------------------------------------------------------------------
 * PERF_DATA_BLOCK
 * ------------------------------------------------------------------------ */

/* PERF_NO_INSTANCES: NumInstances of an object without instances. */
#define NTL_PERF_NO_INSTANCES (-1)

/* Deviations from WinPerf.h that the parser accepted on purpose; set in
 * ntl_perf_block.quirks. */
enum ntl_perf_quirk {
    /* TotalByteLength leaves out the header (Samba). */
    NTL_PERF_QUIRK_TOTAL_EXCLUDES_HEADER = 1u << 0,
    /* A 32-bit counter type sent with CounterSize 8 (Samba); its value is
     * the low 4 bytes, as the type says (Samba leaves the rest
     * uninitialised). */
    NTL_PERF_QUIRK_WIDE_DWORD = 1u << 1,
    /* A counter block larger than its definitions need (padding). */
    NTL_PERF_QUIRK_COUNTER_BLOCK_PADDING = 1u << 2,
};

/* SYSTEMTIME as the header carries it (UTC). */
struct ntl_perf_systemtime {
    uint16_t year, month, day_of_week, day, hour, minute, second, milliseconds;
};

struct ntl_perf_counter_def {
    uint32_t name_index;     /* CounterNameTitleIndex */
    uint32_t help_index;     /* CounterHelpTitleIndex */
    int32_t default_scale;   /* power of ten */
    uint32_t detail_level;
    uint32_t type;           /* PERF_* counter type, see ntlens/perf_value.h */
    uint32_t size;           /* CounterSize as sent: 0, 4, 8 or a text length */
    uint32_t offset;         /* CounterOffset within each counter block */
    uint64_t file_offset;    /* absolute offset of the definition (for errors) */
};

struct ntl_perf_instance {
    const char *name;                 /* UTF-8 (from the UTF-16 name), never NULL */
    uint32_t dup_index;               /* N of "name#N" among same-named ones, 0 first */
    int32_t unique_id;                /* UniqueID, PERF_NO_UNIQUE_ID (-1) if none */
    uint32_t parent_object_index;     /* ParentObjectTitleIndex (0: none) */
    uint32_t parent_instance_number;  /* ParentObjectInstance as sent */
    /* The resolved parent instance in the same block (a Thread's Process
     * instance), or NULL when there is none or it is not in this block. */
    const struct ntl_perf_instance *parent;
    const uint8_t *counters;          /* the PERF_COUNTER_BLOCK (starts with ByteLength) */
    uint32_t counters_size;           /* its ByteLength, validated */
    uint64_t file_offset;             /* absolute offset of PERF_INSTANCE_DEFINITION */
};

struct ntl_perf_object {
    uint32_t name_index;      /* ObjectNameTitleIndex */
    uint32_t help_index;      /* ObjectHelpTitleIndex */
    uint32_t detail_level;
    int32_t default_counter;  /* -1: none */
    int32_t num_instances;    /* as sent; NTL_PERF_NO_INSTANCES for single-instance objects */
    uint32_t code_page;       /* 0: instance names are UTF-16 */
    int64_t perf_time;        /* the object's own time base (PERF_OBJECT_TIMER) */
    int64_t perf_freq;
    size_t ncounters;
    const struct ntl_perf_counter_def *counters;
    /* Objects with instances: ninstances entries. Objects without: 0, and
     * the single counter block is in `counters_block`. */
    size_t ninstances;
    const struct ntl_perf_instance *instances;
    const uint8_t *counters_block;    /* single-instance objects only, else NULL */
    uint32_t counters_block_size;
    uint64_t file_offset;             /* absolute offset of PERF_OBJECT_TYPE */
    uint32_t total_byte_length;
};

struct ntl_perf_block {
    uint32_t little_endian;
    uint32_t version;
    uint32_t revision;
    uint32_t total_byte_length;       /* as sent */
    uint32_t header_length;
    uint32_t num_object_types;        /* as sent (== nobjects after parsing) */
    int32_t default_object;
    struct ntl_perf_systemtime system_time;
    int64_t perf_time;                /* high-resolution counter at sampling */
    int64_t perf_freq;                /* its ticks per second */
    int64_t perf_time_100ns;          /* 100 ns units since 1601 (FILETIME) */
    const char *system_name;          /* UTF-8, "" when absent */
    unsigned quirks;                  /* enum ntl_perf_quirk bits */
    size_t nobjects;
    const struct ntl_perf_object *objects;
    const uint8_t *data;              /* the parsed bytes (borrowed, see below) */
    size_t size;                      /* bytes actually used (<= input size) */
};

/* Parses and validates one PERF_DATA_BLOCK. The block borrows `data`: keep
 * those bytes alive and unchanged until ntl_perf_block_free. Memory used is
 * proportional to `size`. See the status contract at the top of this file. */
int ntl_perf_block_parse(const void *data, size_t size, struct ntl_perf_block **out,
                         struct ntl_error *err);
void ntl_perf_block_free(struct ntl_perf_block *b);

/* What a raw answer looks like before parsing, for sources that must decide
 * whether to retry with a larger buffer. */
enum ntl_perf_answer {
    NTL_PERF_ANSWER_OK,          /* a complete header with its objects present */
    NTL_PERF_ANSWER_SHORT,       /* header claims more bytes than given; *needed says how many */
    NTL_PERF_ANSWER_ZERO_FILLED, /* Samba: valid header, NumObjectTypes > 0, zeros after it */
    NTL_PERF_ANSWER_INVALID,     /* not a PERF_DATA_BLOCK (no "PERF", header too short) */
};
/* Cheap check of the header only (no allocation). needed may be NULL; it is
 * set to the total size the header claims (Samba's excluded header added). */
enum ntl_perf_answer ntl_perf_block_classify(const void *data, size_t size, size_t *needed);

/* The object with this ObjectNameTitleIndex, or NULL. */
const struct ntl_perf_object *ntl_perf_block_find_object(const struct ntl_perf_block *b,
                                                         uint32_t name_index);
/* Index in o->counters of the first definition with this name index, or -1. */
int ntl_perf_object_find_counter(const struct ntl_perf_object *o, uint32_t name_index);

/* The counter block that holds instance `instance` of o: o->counters_block
 * for objects without instances (instance ignored). NULL when out of range. */
const uint8_t *ntl_perf_object_counter_block(const struct ntl_perf_object *o, size_t instance,
                                             uint32_t *size);

/* Raw bytes of counter definition `counter` in the counter block of
 * `instance` (ignored for objects without instances). Sizes were validated
 * at parse time, so this only fails for out-of-range arguments (NULL). */
const uint8_t *ntl_perf_counter_data(const struct ntl_perf_object *o, size_t counter,
                                     size_t instance);
/* The counter's value as an integer, as wide as its type says (PDH's
 * rule): 4 bytes for DWORD types, also when sent with CounterSize 8
 * (Samba), 8 for LARGE types; 0 for text and zero-size counters or
 * out-of-range arguments. */
uint64_t ntl_perf_counter_u64(const struct ntl_perf_object *o, size_t counter, size_t instance);

/* Formats an instance the way PDH paths show it: "parent/name#N" (the
 * parent part when a parent was resolved, "#N" when dup_index > 0). Returns
 * the length needed, like snprintf. */
size_t ntl_perf_instance_path_name(const struct ntl_perf_instance *in, char *buf, size_t size);

/* True when something at detail level `level` (100..400) is shown to a user
 * who asked for detail `wanted` (PDH: level <= wanted). */
static inline bool ntl_perf_detail_visible(uint32_t level, uint32_t wanted)
{
    return level <= wanted;
}

/* Converts a header SYSTEMTIME to Unix seconds (UTC); false if invalid. */
bool ntl_perf_systemtime_to_unix(const struct ntl_perf_systemtime *st, int64_t *seconds);

#ifdef __cplusplus
}
#endif
#endif
