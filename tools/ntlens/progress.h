/* A progress bar on stderr, drawn only when stderr is a terminal and stdout
 * is not a pipe (whose reader may print on the terminal at any moment). */
#ifndef NTLENS_TOOL_PROGRESS_H
#define NTLENS_TOOL_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>

struct progress {
    bool active;
    const char *label;
    uint64_t total;
    uint64_t last_drawn_permille;
};

void progress_start(struct progress *p, const char *label, uint64_t total);
/* Cheap to call often: redraws only when the shown value changes. */
void progress_update(struct progress *p, uint64_t done);
/* Clears the bar line. */
void progress_end(struct progress *p);
/* Clears whichever bar is drawn, before a line of output goes to the
 * terminal; the bar comes back at its next update, on a line of its own. */
void progress_clear(void);

#endif
