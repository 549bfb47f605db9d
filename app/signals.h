/* signals: rtstap's handling of SIGINT, SIGTERM and SIGHUP — the program's, not the
 * library's (a library installs no handler). A signal that ends the process first removes
 * every temporary file still in progress (stap_atomic_remove_pending), then ends it by the
 * same signal. Between cli_graceful_begin and cli_graceful_end the first SIGINT or SIGTERM
 * does not end it: cli_graceful_requested returns its number, and the command finishes
 * the work in flight and publishes what it has; a second signal, or SIGHUP, ends it.
 * SIGXFSZ is ignored: a write past a file size limit fails (EFBIG) and is reported. */
#ifndef CLI_SIGNALS_H
#define CLI_SIGNALS_H

/* Install the handlers and ignore SIGXFSZ (main, once). A signal the caller ignores
 * (nohup, a background job) stays ignored. */
void cli_signals_install(void);
void cli_graceful_begin(void);
void cli_graceful_end(void);
/* Also call fn from the handler when that first signal comes (until cli_graceful_end): it
 * must be async-signal-safe (stap_live_udp_stop, say), for a command that waits on
 * something other than its own loop. */
void cli_graceful_notify(void (*fn)(void));
/* The signal of a graceful stop asked for (SIGINT or SIGTERM), else 0. */
int cli_graceful_requested(void);
/* The stream that a graceful stop stops (stap_stream_stop with the signal's number; at once
 * when the signal came before), until cli_graceful_end or another attach; NULL: none. End it
 * before the stream is destroyed. */
typedef struct stap_stream stap_stream;
void cli_graceful_attach(stap_stream *s);

#endif
