/* rtstap/vrt.h: live input over UDP (issue 45; the wire format is docs/live.md) — one
 * VITA-49.0 IF Data packet with Stream ID per datagram, all words big-endian: the header
 * (type 0001, TSI = 11: the integer timestamp is the pulse number since the stream began,
 * mod 2^32; TSF = 01: the fractional timestamp is the range gate of the packet's first
 * sample), the stream ID (the channel), then one word per range gate, int16 I in the high
 * half and int16 Q in the low half. Context packets (type 0100) may carry the sample rate
 * and RF reference frequency.
 *
 * Four parts, none of which allocates per packet or prints:
 *   the packer     stap_vrt_pack_data, stap_vrt_pack_context, stap_vrt_pack_cpi: a CPI's
 *                  cube into datagrams of G gates;
 *   the parser     stap_vrt_parse: a datagram into its header fields and a pointer to its
 *                  samples, or the one class of what is wrong with it;
 *   the assembler  stap_vrt_assembler_*: datagrams placed by (channel, pulse, gate) into a
 *                  fixed pool of CPI buffers; each CPI reported complete (its samples) or
 *                  lost (never zero-filled), with duplicates, late packets and malformed
 *                  ones counted;
 *   the receiver   stap_live_udp_*: a UDP socket read by a thread of its own into the
 *                  assembler, CPIs pulled in order by one consumer. */
#ifndef RTSTAP_VRT_H
#define RTSTAP_VRT_H

#include <stddef.h>
#include <stdint.h>

#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

enum {
    STAP_VRT_HEADER_WORDS = 5,  /* header, stream ID, integer timestamp, fractional (2)   */
    STAP_VRT_MAX_BYTES = 65504, /* the largest datagram: UDP over IPv4 carries 65507 bytes */
    STAP_VRT_MAX_GATES = STAP_VRT_MAX_BYTES / 4 - STAP_VRT_HEADER_WORDS, /* 16371 a packet */
    STAP_VRT_CONTEXT_BYTES = 28, /* stap_vrt_pack_context's largest packet                 */
    STAP_VRT_TYPE_DATA = 1,     /* packet types: IF Data with Stream ID                    */
    STAP_VRT_TYPE_CONTEXT = 4   /*               IF Context                                */
};

/* What a datagram is (stap_vrt_parse). The first three are the stream's; the others are
 * malformed (stap_vrt_malformed), counted and otherwise ignored. */
typedef enum stap_vrt_kind {
    STAP_VRT_DATA = 0,      /* an IF data packet of the stream: samples to place          */
    STAP_VRT_CONTEXT,       /* a context packet carrying the sample rate or RF frequency  */
    STAP_VRT_CONTEXT_OTHER, /* a context packet carrying neither: ignored                 */
    STAP_VRT_SHORT,         /* shorter than one word, than the fields its header and
                               context indicators declare, or a data packet of no samples */
    STAP_VRT_SIZE,          /* the packet size word disagrees with the datagram's length  */
    STAP_VRT_TYPE,          /* a packet type other than 0001 (data) and 0100 (context)    */
    STAP_VRT_TIMESTAMP,     /* a data packet whose TSI is not 11 or TSF not 01: it cannot
                               be placed                                                  */
    STAP_VRT_CHANNEL,       /* a data packet's stream ID (its channel) >= C               */
    STAP_VRT_GATES,         /* a data packet's samples reach past the last range gate     */
    STAP_VRT_KINDS
} stap_vrt_kind;

/* "data", "context", "context-other", "short", "size", "type", "timestamp", "channel",
 * "gates"; "unknown" for another value. */
const char *stap_vrt_kind_name(stap_vrt_kind k);
/* 1 for the malformed kinds (STAP_VRT_SHORT and after), else 0. */
int stap_vrt_malformed(stap_vrt_kind k);

/* A datagram's fields, as stap_vrt_parse read them. */
typedef struct stap_vrt_packet {
    stap_vrt_kind kind;
    unsigned type;        /* the 4-bit packet type                                       */
    unsigned count;       /* the 4-bit packet count of its stream                        */
    unsigned words;       /* the packet size word: 32-bit words of the whole packet      */
    int has_class;        /* C: a class ID (2 words, skipped)                            */
    int has_trailer;      /* T (data packets): a trailer word (skipped)                  */
    unsigned tsi, tsf;    /* the timestamp kinds (data: 3 and 1)                         */
    uint32_t stream_id;   /* data: the channel                                           */
    uint32_t pulse;       /* data: the integer timestamp, the pulse number mod 2^32      */
    uint64_t gate;        /* data: the fractional timestamp, the first sample's gate     */
    const unsigned char *payload; /* data: the first sample's word (in the datagram)     */
    size_t samples;       /* data: samples (words) in the payload                        */
    int has_sample_rate, has_rf; /* context: which of the two it carries                */
    double sample_rate_hz, rf_hz;
} stap_vrt_packet;

/* Read one datagram of `len` bytes for a stream of `channels` channels and `range_gates`
 * gates (0: not checked). Returns the kind, also in pkt->kind; the fields read up to the
 * fault are filled. The checks, in order: SHORT (under 4 bytes), SIZE, TYPE, SHORT (the
 * header's fields, a context packet's indicated fields up to the sample rate, no
 * samples), TIMESTAMP, CHANNEL, GATES. */
stap_vrt_kind stap_vrt_parse(const void *datagram, size_t len, int channels, int range_gates,
                             stap_vrt_packet *pkt);

/* One IF data packet into out (4 (5 + n) bytes): stream `channel`, integer timestamp
 * `pulse`, fractional timestamp `gate`, packet count `count` (mod 16), the n samples of
 * iq (int16 (i, q) pairs in the machine's order). Returns its bytes, 0 when n is not in
 * 1..STAP_VRT_MAX_GATES. */
size_t stap_vrt_pack_data(void *out, uint32_t channel, uint32_t pulse, uint64_t gate,
                          const int16_t *iq, int n, unsigned count);
/* One context packet into out (at most STAP_VRT_CONTEXT_BYTES): stream `stream_id`, TSI
 * and TSF 0, the sample rate and the RF reference frequency in Hz when not NULL (VITA-49's
 * 64-bit fixed point, 20 fraction bits). Returns its bytes. */
size_t stap_vrt_pack_context(void *out, uint32_t stream_id, const double *sample_rate_hz,
                             const double *rf_hz, unsigned count);

/* A stream's CPI shape. */
typedef struct stap_vrt_shape {
    int channels, pulses, range_gates;
} stap_vrt_shape;

/* STAP_OK, or STAP_EINVAL naming the value out of range (each >= 1; channels at most 2^31
 * - 1, a CPI's samples under 2^40). */
int stap_vrt_shape_validate(const stap_vrt_shape *s, stap_error *err);
/* The data packets of one CPI in runs of `gates` (>= 1) gates: P x C x ceil(R / gates). */
long long stap_vrt_cpi_packets(const stap_vrt_shape *s, int gates);
/* Packet j (0 <= j < stap_vrt_cpi_packets) of stream CPI `cpi`, whose samples are cube
 * (C x P x R int16 (i, q) pairs in the machine's order, channel, pulse, range), into out
 * (4 (5 + gates) bytes at most). The order: pulse by pulse, within a pulse channel by
 * channel, within a channel the gates in runs of `gates` (the last shorter). counts: C
 * per-channel packet counts, the packet's advanced. Returns its bytes. */
size_t stap_vrt_pack_cpi(void *out, const stap_vrt_shape *s, int gates, const int16_t *cube,
                         long long cpi, long long j, unsigned char *counts);

/* ---- the assembler ------------------------------------------------------------------- */
typedef struct stap_vrt_assembler stap_vrt_assembler;

/* What the assembler counted. */
typedef struct stap_vrt_counts {
    unsigned long long datagrams;               /* pushed                                   */
    unsigned long long kinds[STAP_VRT_KINDS];   /* by what stap_vrt_parse said              */
    unsigned long long malformed;               /* the malformed kinds together             */
    unsigned long long placed;                  /* data packets with a new sample placed    */
    unsigned long long duplicates;              /* data packets carrying a sample already
                                                   received (the first copy is kept)        */
    unsigned long long late;                    /* data packets of a CPI already reported   */
    unsigned long long skipped;                 /* data packets before the first CPI        */
    unsigned long long overrun;                 /* data packets dropped: their CPI's buffer
                                                   still held by the caller (not released)  */
    long long first_cpi;                        /* the stream's first CPI (-1: none yet)    */
    long long cpis_complete, cpis_lost;         /* reported                                 */
    int has_sample_rate, has_rf;                /* the last context packet's values         */
    double sample_rate_hz, rf_hz;
} stap_vrt_counts;

typedef enum stap_vrt_event_kind {
    STAP_VRT_CPI_COMPLETE = 1, /* every sample of the CPI received: iq holds it          */
    STAP_VRT_CPI_LOST = 2      /* count CPIs from cpi that can no longer be complete      */
} stap_vrt_event_kind;

/* Why CPIs were lost (stap_vrt_event.reason). */
typedef enum stap_vrt_lost_reason {
    STAP_VRT_LOST_NONE = 0,    /* (a complete CPI)                                        */
    STAP_VRT_LOST_MISSING = 1, /* packets of it received, others never (or not in time)   */
    STAP_VRT_LOST_UNSEEN = 2,  /* no packet of it received at all                         */
    STAP_VRT_LOST_OVERRUN = 3  /* overload: a packet of it found its buffer still held by
                                  the caller (not released), so it was dropped whole      */
} stap_vrt_lost_reason;

/* "none", "missing", "unseen", "overload"; "unknown" for another value. */
const char *stap_vrt_lost_reason_name(stap_vrt_lost_reason r);

typedef struct stap_vrt_event {
    stap_vrt_event_kind kind;
    long long cpi;       /* the stream's CPI: pulse number / P                           */
    long long count;     /* CPIs (1 for a complete one)                                  */
    stap_vrt_lost_reason reason; /* lost: why (one reason for the whole range)           */
    const int16_t *iq;   /* complete: C x P x R int16 (i, q) pairs in the machine's order,
                            (channel, pulse, range); valid until stap_vrt_assembler_release */
} stap_vrt_event;

/* An assembler for a stream of shape s with `slots` CPI buffers (>= 1), all allocated here.
 * A CPI is held open until complete or until a packet of a CPI `slots` or more later
 * arrives; a complete CPI's buffer is the caller's until released. A packet whose buffer
 * the caller still holds for an older CPI is an overrun: it and every later packet of
 * its CPI are dropped, and that CPI is lost (reason STAP_VRT_LOST_OVERRUN). */
int stap_vrt_assembler_create(stap_vrt_assembler **a, const stap_vrt_shape *s, int slots,
                              stap_error *err);
/* Parse and place one datagram (counted whatever it is); returns its kind. The first data
 * packet starts the stream: at its CPI when it belongs to the CPI's first pulse, else at
 * the next CPI (a listener started mid-stream); pulse numbers then unwrap mod 2^32 around
 * the highest seen. */
stap_vrt_kind stap_vrt_assembler_push(stap_vrt_assembler *a, const void *datagram, size_t len);
/* The next event in the order they happened: 1 and *ev, or 0 when none is pending. */
int stap_vrt_assembler_next(stap_vrt_assembler *a, stap_vrt_event *ev);
/* Give a complete CPI's buffer back (its event's iq is no longer valid). A CPI not held
 * is ignored. */
void stap_vrt_assembler_release(stap_vrt_assembler *a, long long cpi);
/* Report every CPI before `end` that is not complete as lost (end < 0: every CPI up to the
 * highest seen) and count their later packets as late: the end of a stream, or a CPI
 * waited for long enough. */
void stap_vrt_assembler_flush(stap_vrt_assembler *a, long long end);
const stap_vrt_counts *stap_vrt_assembler_counts(const stap_vrt_assembler *a);
void stap_vrt_assembler_destroy(stap_vrt_assembler *a);


/* ---- the receiver: a UDP socket, its receive thread and the assembler ------------------ */
/* Our own code: Debian has no VITA-49 library (issue 45), and the format is small. The
 * receiver binds a UDP socket, and a thread of its own reads it in batches (recvmmsg) into
 * the assembler above; the consumer pulls the CPIs, complete or lost, in CPI order. The
 * thread never waits on the consumer: a CPI whose buffer is still held when its packets
 * come is lost whole (STAP_VRT_LOST_OVERRUN). Memory is fixed at create: `slots` CPI
 * buffers and one batch of datagrams; nothing is allocated per packet or per CPI.
 *
 * A CPI still incomplete is lost (never zero-filled) when a later CPI completes (CPIs are
 * given out in order, and a packet is not expected to overtake a whole CPI), when a packet
 * of a CPI `slots` or more later arrives, or when no packet has added a sample for
 * timeout_ms (a sender that stopped mid-CPI).
 *
 * Threads: one consumer thread calls next and release; counts and info may be called from
 * any thread; stop from any thread or from a signal handler (it is async-signal-safe);
 * destroy once, when no other call is in progress. */
typedef struct stap_live_udp stap_live_udp;

typedef struct stap_live_udp_options {
    int slots;          /* CPI buffers (0: 8)                                              */
    int rcvbuf_bytes;   /* the socket receive buffer asked for (0: 64 MiB); SO_RCVBUFFORCE
                           when the process may (CAP_NET_ADMIN), else SO_RCVBUF, which the
                           system caps at net.core.rmem_max                                */
    int timeout_ms;     /* an incomplete CPI is lost when no packet has added a sample for
                           this long (0: 1000)                                             */
    int batch;          /* datagrams a recvmmsg call (0: 64; at most 1024)                 */
    int raw_item_bytes; /* 0: VITA-49 packets. Else raw mode (a GNU Radio ZMQ sink's
                           stream): the datagrams' bytes are one stream of items of this
                           many bytes, C x P x R items a CPI, CPIs framed by count from the
                           first byte; a CPI is lost only by overload (a lost datagram
                           cannot be seen: it shifts every later CPI), and never by the
                           timeout                                                         */
    int datagram_bytes; /* a transport's longest datagram (message) kept whole (0: 65536, UDP's
                           limit; at most 64 MiB): a longer one is cut — malformed in VITA-49
                           mode, and in raw mode an error that ends the receiver (the
                           framing of every later CPI would be lost)                      */
} stap_live_udp_options;

/* What the socket got (stap_live_udp_info). */
typedef struct stap_live_info {
    char address[300];   /* udp://HOST:PORT bound, the port chosen when 0 was asked        */
    int port;
    long long rcvbuf_asked;  /* bytes                                                      */
    long long rcvbuf_got;    /* the usable size: getsockopt(SO_RCVBUF)'s value / 2 (Linux
                                reports twice what it was given, for its bookkeeping)      */
    int rcvbuf_forced;       /* SO_RCVBUFFORCE was allowed                                 */
    int rcvbuf_capped;       /* got < asked: the system capped it (net.core.rmem_max)      */
} stap_live_info;

/* What the receiver counted (stap_live_udp_counts): the assembler's counts and its own. */
typedef struct stap_live_counts {
    stap_vrt_counts vrt;                 /* by datagram and CPI (above)                     */
    unsigned long long bytes;            /* received, all datagrams                         */
    unsigned long long truncated;        /* datagrams longer than 64 KiB (cut: malformed)   */
    unsigned long long batches;          /* recvmmsg calls that returned datagrams          */
    long long lost[4];                   /* CPIs lost by stap_vrt_lost_reason                */
    long long timeouts;                  /* times timeout_ms ended incomplete CPIs           */
    double first_ms, last_ms;            /* stap_now_ms() of the first and the last datagram
                                            (0: none yet)                                  */
} stap_live_counts;

typedef enum stap_live_event_kind {
    STAP_LIVE_NONE = 0, /* nothing before the timeout                                      */
    STAP_LIVE_CPI = 1,  /* a complete CPI: iq, until stap_live_udp_release                  */
    STAP_LIVE_LOST = 2, /* count CPIs from cpi lost, for reason                             */
    STAP_LIVE_END = 3   /* stopped (stap_live_udp_stop): nothing more will come            */
} stap_live_event_kind;

typedef struct stap_live_event {
    stap_live_event_kind kind;
    long long cpi;               /* the stream's CPI index (pulse number / P)              */
    long long count;             /* CPIs: 1 for a complete one                             */
    stap_vrt_lost_reason reason; /* lost: why                                              */
    const int16_t *iq;           /* complete: C x P x R int16 (i, q) pairs in the machine's
                                    order, (channel, pulse, range)                         */
    double arrival_ms;           /* complete: stap_now_ms() when the datagram that completed
                                    it was received (the recvmmsg call's return)           */
    const void *data;            /* complete: the CPI's bytes: iq, or in raw mode the items
                                    as they came (NULL iq)                                 */
} stap_live_event;

/* A run of lost CPIs, for reports (stap_stream_report.live). */
typedef struct stap_live_lost_range {
    long long cpi, count;        /* the stream's CPIs cpi .. cpi + count - 1               */
    stap_vrt_lost_reason reason;
} stap_live_lost_range;

/* What a consumer of the events decided (live_tally.c): the complete CPIs and the lost ones
 * of a stream that ends once `decide` CPIs came (complete or lost; the lost ones past it are
 * not counted), every lost CPI listed as runs by reason. The list starts with room for 4 096
 * runs and doubles when a lost CPI needs more (never per complete CPI); if memory runs out it
 * stops growing, `lost` stays exact and ranges_truncated says so. The stream runtime's live
 * source and `rtstap listen --discard` keep their tallies with it. */
typedef struct stap_live_tally {
    long long decide;            /* CPIs the stream takes, complete or lost                */
    long long complete, lost;
    long long first_cpi;         /* the first CPI decided (-1: none yet)                   */
    stap_live_lost_range *ranges;
    int nranges, cap, ranges_truncated;
} stap_live_tally;
/* STAP_EINVAL for decide < 1, STAP_ENOMEM. */
int stap_live_tally_init(stap_live_tally *t, long long decide, stap_error *err);
void stap_live_tally_free(stap_live_tally *t);
/* Count ev (a CPI or LOST event; others change nothing): 1 for a complete CPI within the
 * stream's `decide` (the caller runs or drops it), else 0. */
int stap_live_tally_add(stap_live_tally *t, const stap_live_event *ev);
/* 1 once `decide` CPIs were counted (nothing more belongs to the stream) */
int stap_live_tally_done(const stap_live_tally *t);

/* Bind `address` (udp://HOST:PORT: HOST a name, an IPv4 address or [IPv6]; PORT 0: a free
 * port, see stap_live_udp_info) for a stream of shape s and start the receive thread.
 * opts NULL: the defaults. STAP_EINVAL for an address or option out of range, STAP_EIO
 * when the address cannot be bound. */
int stap_live_udp_create(stap_live_udp **rx, const stap_vrt_shape *s, const char *address,
                         const stap_live_udp_options *opts, stap_error *err);
/* A receiver on another transport than a UDP socket (ZeroMQ: the command line's stap/zmq/):
 * the caller's two functions move datagrams (messages) in, on the receive thread; the rest
 * is stap_live_udp_create's (assembly, events, counts; info has the address and no socket
 * buffer). The transport must outlive the receiver (destroy it after). */
typedef struct stap_live_transport {
    void *user;
    const char *address;   /* named in info and messages                                  */
    /* Wait up to wait_ms (< 0: without end) until a datagram may be read or stop_fd is
     * readable: 1 (a datagram may be read), 0 (not: the time passed, or the stop), -1 with
     * errno on a failure */
    int (*wait)(void *user, int stop_fd, int wait_ms);
    /* Up to max datagrams without waiting: the i-th into bufs[i] (cap bytes; a longer one
     * is cut and truncated[i] set), its length (at most cap) in lens[i]. Returns how many
     * (0: none now), or -1 with errno on a failure */
    int (*read)(void *user, unsigned char *const *bufs, size_t cap, size_t *lens, int *truncated, int max);
} stap_live_transport;
int stap_live_udp_create_on(stap_live_udp **rx, const stap_vrt_shape *s, const stap_live_transport *t,
                            const stap_live_udp_options *opts, stap_error *err);
/* Wait up to timeout_ms (< 0: without end) for the next event, in CPI order: STAP_OK and
 * ev->kind CPI, LOST, NONE (the time passed) or END (stopped, every event before it given
 * out). STAP_EIO when the receive thread failed (the socket: err says why); the events
 * before the failure come first. */
int stap_live_udp_next(stap_live_udp *rx, stap_live_event *ev, int timeout_ms, stap_error *err);
/* Give a complete CPI's buffer back (its event's iq is no longer valid). */
void stap_live_udp_release(stap_live_udp *rx, long long cpi);
/* Stop receiving: the thread ends, next gives out what is pending then END. CPIs still
 * incomplete are not reported. Async-signal-safe (a flag and a write to an eventfd). */
void stap_live_udp_stop(stap_live_udp *rx);
void stap_live_udp_counts(stap_live_udp *rx, stap_live_counts *out);
void stap_live_udp_info(const stap_live_udp *rx, stap_live_info *out);
/* Stop, join the thread, close the socket and free everything. */
void stap_live_udp_destroy(stap_live_udp *rx);

#ifdef __cplusplus
}
#endif

#endif
