/* Several traces merged by event time (etl-merge.h). */
#include "etl-merge.h"

#include <stdlib.h>
#include <string.h>

#include "cli.h"

int etl_merge_open(struct etl_merge *m, const struct etl_cli *proto, char **paths, size_t n)
{
    memset(m, 0, sizeof *m);
    m->c = calloc(n, sizeof *m->c);
    m->head = calloc(n, sizeof *m->head);
    m->ft = calloc(n, sizeof *m->ft);
    m->live = calloc(n, sizeof *m->live);
    if (!m->c || !m->head || !m->ft || !m->live) {
        etl_merge_close(m);
        return cli_failf(proto->cmd, "out of memory");
    }
    for (size_t i = 0; i < n; i++) {
        int rc;
        m->c[i] = *proto;
        m->c[i].t = NULL;
        if ((rc = etl_cli_open(&m->c[i], paths[i]))) {
            etl_merge_close(m);
            return rc;
        }
        m->n = i + 1;
    }
    return 0;
}

/* Reads trace i's next event into its head. */
static int refill(struct etl_merge *m, size_t i)
{
    int rc = etl_cli_next(&m->c[i], &m->head[i]);
    m->live[i] = rc > 0;
    if (rc > 0)
        m->ft[i] = ntl_etl_time_to_filetime(m->c[i].t, m->head[i].timestamp);
    return rc;
}

/* One trace: its events read straight into ev (a copy of each event
 * through head was 2.5% of etl events). */
static int single_next(struct etl_merge *m, struct ntl_etl_event *ev, struct etl_cli **from)
{
    if (m->started && !m->live[0])
        return 0;
    m->started = true;
    int rc = etl_cli_next(&m->c[0], ev);
    if (!(m->live[0] = rc > 0))
        return rc < 0 ? -1 : 0;
    m->ft[0] = ntl_etl_time_to_filetime(m->c[0].t, ev->timestamp);
    m->last = 0;
    *from = &m->c[0];
    return 1;
}

int etl_merge_next(struct etl_merge *m, struct ntl_etl_event *ev, struct etl_cli **from)
{
    size_t best = m->n;
    if (m->n == 1)
        return single_next(m, ev, from);
    if (!m->started) {
        m->started = true;
        for (size_t i = 0; i < m->n; i++)
            if (refill(m, i) < 0)
                return -1;
    } else if (m->live[m->last] && refill(m, m->last) < 0) {
        return -1;
    }
    for (size_t i = 0; i < m->n; i++)
        if (m->live[i] && (best == m->n || m->ft[i] < m->ft[best]))
            best = i;
    if (best == m->n)
        return 0;
    m->last = best;
    *ev = m->head[best];
    *from = &m->c[best];
    return 1;
}

void etl_merge_close(struct etl_merge *m)
{
    for (size_t i = 0; i < m->n; i++)
        etl_cli_close(&m->c[i]);
    free(m->c);
    free(m->head);
    free(m->ft);
    free(m->live);
    memset(m, 0, sizeof *m);
}
