/* Every subcommand: NAME is what the user types (one word, or a group and a
 * word like "ipt dump"), FUNC lives in cmd-<name>.c. Each FUNC gets argv with
 * argv[0] set to the full command name and returns the exit code:
 * 0 ok, 1 failure, 2 usage error. */
#ifndef NTLENS_TOOL_COMMANDS_H
#define NTLENS_TOOL_COMMANDS_H

/* The exporter needs libmicrohttpd and libyaml, which the mingw-w64
 * toolchain lacks: tools/ntlens/meson.build builds it where they are found. */
#ifdef NTLENS_HAVE_EXPORTER
#define NTLENS_EXPORTER_COMMAND(X)                                                            \
    X("exporter", cmd_exporter, "serve performance data of many hosts to Prometheus")
#else
#define NTLENS_EXPORTER_COMMAND(X)
#endif

/* ipt flow needs Zydis, which only native builds have (lib/ipt/meson.build). */
#ifdef NTLENS_HAVE_IPT_FLOW
#define NTLENS_IPT_FLOW(X) \
    X("ipt flow", cmd_ipt_flow, "reconstruct the instructions of an Intel PT trace (ptxed)")
#else
#define NTLENS_IPT_FLOW(X)
#endif

#define NTLENS_COMMANDS(X)                                                                    \
    X("ps", cmd_ps, "list processes and threads (PsList)")                                    \
    X("counters", cmd_counters, "list performance objects, counters and instances")           \
    X("sample", cmd_sample, "sample counter paths over time (typeperf)")                      \
    X("capture", cmd_capture, "record performance-data snapshots to a file")                  \
    X("samba-provider", cmd_samba_provider, "fill Samba's perfmon store with this host's data") \
    NTLENS_EXPORTER_COMMAND(X)                                                                \
    X("ipt dump", cmd_ipt_dump, "print Intel PT packets (ptdump)")                            \
    NTLENS_IPT_FLOW(X)                                                                        \
    X("ipt modules", cmd_ipt_modules, "count Intel PT branch targets per module")             \
    X("etl info", cmd_etl_info, "summarise an ETW trace file")                                \
    X("etl events", cmd_etl_events, "list the events of an ETW trace file")                   \
    X("etl stats", cmd_etl_stats, "count the events of an ETW trace file by provider and event") \
    X("etl images", cmd_etl_images, "list image load events of an ETW trace file")            \
    X("etl ipt", cmd_etl_ipt, "extract Intel PT traces from an ETW trace file")               \
    X("format", cmd_format, "format a token blob, SID, GUID or FILETIME as event fields show them") \
    X("dump build", cmd_dump_build, "build a minidump of kernel modules from an ETW trace")   \
    X("dump show", cmd_dump_show, "show the streams, modules and memory of a minidump")       \
    X("dump relocate", cmd_dump_relocate, "move modules of a minidump to new addresses")     \
    X("profile", cmd_profile, "sampling profile: hits per module, function and bucket")   \
    X("stacks", cmd_stacks, "call stacks of every thread, kernel and user mode (Process Explorer)")

#define NTLENS_DECLARE(name, func, summary) int func(int argc, char **argv);
NTLENS_COMMANDS(NTLENS_DECLARE)
#undef NTLENS_DECLARE

#endif
