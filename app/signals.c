/* signals.c: SIGINT, SIGTERM and SIGHUP; SIGXFSZ ignored (signals.h). */
#include "signals.h"

#include <signal.h>
#include <stdatomic.h>
#include <string.h>

#include "h5io.h" /* stap_atomic_remove_pending */
#include "rtstap/stream.h" /* stap_stream_stop: async-signal-safe */

static volatile sig_atomic_t graceful_on, graceful_sig;
/* the stream a graceful stop stops (lock-free: read in the handler), and a function it calls */
static _Atomic(stap_stream *) attached;
static void (*volatile graceful_fn)(void);

void cli_graceful_begin(void)
{
    graceful_sig = 0;
    graceful_on = 1;
}
void cli_graceful_notify(void (*fn)(void)) { graceful_fn = fn; }
void cli_graceful_end(void)
{
    graceful_on = 0;
    graceful_fn = NULL;
    atomic_store(&attached, NULL);
}
int cli_graceful_requested(void) { return graceful_on ? (int)graceful_sig : 0; }

void cli_graceful_attach(stap_stream *s)
{
    atomic_store(&attached, s);
    /* a signal that came before the stream existed stops it at once */
    if (s && graceful_on && graceful_sig) stap_stream_stop(s, graceful_sig);
}

static void on_signal(int sig)
{
    if (graceful_on && !graceful_sig && sig != SIGHUP) {
        graceful_sig = sig;
        stap_stream *s = atomic_load(&attached);
        if (s) stap_stream_stop(s, sig);
        void (*fn)(void) = graceful_fn;
        if (fn) fn();
        return;
    }
    stap_atomic_remove_pending();
    signal(sig, SIG_DFL);
    raise(sig);
}

void cli_signals_install(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
    for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++) {
        struct sigaction old;
        if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN) continue;
        sigaction(sigs[i], &sa, NULL);
    }
    /* a file size limit (ulimit -f): SIGXFSZ's default action ends the process mid-write,
     * its temporary left behind; ignored, the write fails with EFBIG ("File too large"),
     * which every writer reports, removing its temporary */
    signal(SIGXFSZ, SIG_IGN);
}
