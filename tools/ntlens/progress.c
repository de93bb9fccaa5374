#include "progress.h"

#include <stdio.h>
#include <sys/stat.h>

#include "cli.h"

#define BAR_WIDTH 40

/* The bar on the terminal now, for progress_clear. */
static struct progress *drawn;

/* Output into a pipe may reach the terminal through the reader (`| head`,
 * `| less`) at moments no clearing can follow, so a bar would share its
 * lines: no bar then. Output to the terminal or a file is safe, as rows
 * clear the bar first (out.c). */
static bool stdout_is_pipe(void)
{
    struct stat st;
    return fstat(fileno(stdout), &st) == 0 && S_ISFIFO(st.st_mode);
}

void progress_start(struct progress *p, const char *label, uint64_t total)
{
    p->active = total > 0 && cli_stderr_is_terminal() && !stdout_is_pipe();
    p->label = label;
    p->total = total;
    p->last_drawn_permille = UINT64_MAX;
    progress_update(p, 0);
}

void progress_update(struct progress *p, uint64_t done)
{
    uint64_t permille;
    int filled;

    if (!p->active)
        return;
    if (done > p->total)
        done = p->total;
    permille = p->total ? done * 1000 / p->total : 1000;
    if (permille == p->last_drawn_permille)
        return;
    p->last_drawn_permille = permille;
    drawn = p;
    filled = (int)(permille * BAR_WIDTH / 1000);
    fprintf(stderr, "\r%s [%.*s%*s] %3u%%", p->label, filled,
            "########################################", BAR_WIDTH - filled, "",
            (unsigned)(permille / 10));
    fflush(stderr);
}

void progress_end(struct progress *p)
{
    if (!p->active)
        return;
    progress_clear();
    p->active = false;
}

void progress_clear(void)
{
    if (!drawn)
        return;
    fprintf(stderr, "\r%*s\r", BAR_WIDTH + 60, "");
    fflush(stderr);
    drawn->last_drawn_permille = UINT64_MAX; /* drawn again at the next update */
    drawn = NULL;
}
