/* plot: rtstap's pictures — axes, ticks, labels and a colour bar drawn with cairo (PNG, SVG
 * or PDF from one code path); and the radar pictures built on it: the angle–Doppler spectrum of an input cube at a range
 * cell, the SINR loss against Doppler, and the range–Doppler map of one output beam
 * with the CFAR detections marked. PNG files are published atomically (h5io.h's
 * rt_atomic_*): every writer takes the stap_write_mode (STAP_WRITE_NEW: an existing file is
 * refused; STAP_WRITE_REPLACE: replaced once the new one is complete). */
#ifndef PLOT_H
#define PLOT_H

#include <stddef.h>
#include <stdint.h>

#include "sinr.h"
#include "stap.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- drawing ------------------------------------------------------------------------ */
/* A picture being drawn onto its file's surface — PNG, SVG or PDF by the path's extension —
 * as a temporary beside the path, published by plot_write (cairo's types stay in plot.c). */
typedef struct plot_image {
    int w, h;
    void *surface;      /* cairo_surface_t * */
    void *cr;           /* cairo_t *         */
    int format;         /* plot_format       */
    stap_write_mode mode;
    int fd;             /* the temporary, open for cairo's writes (plot_stream) */
    int write_errno;    /* the first of them that failed, else 0               */
    char path[4096], tmp[4096];
} plot_image;

typedef struct plot_rgb { uint8_t r, g, b; } plot_rgb;

typedef enum plot_format { PLOT_PNG, PLOT_SVG, PLOT_PDF } plot_format;
/* .svg and .pdf (any case) name SVG and PDF; anything else is PNG */
plot_format plot_format_of(const char *path);

/* A picture for path (STAP_WRITE_NEW: an existing path refused here, before any drawing). */
int plot_image_create(plot_image *im, const char *path, stap_write_mode mode, int w, int h,
                      plot_rgb background, stap_error *err);
/* Frees im; a picture not written leaves nothing behind. */
void plot_image_free(plot_image *im);
void plot_fill_rect(plot_image *im, double x0, double y0, double x1, double y1, plot_rgb c);
void plot_line(plot_image *im, double x0, double y0, double x1, double y1, double width, plot_rgb c);
/* Text of `size` pixels (a sans-serif face, anti-aliased); (x, y) is the top-left corner;
 * vertical != 0 draws it rotated 90 degrees counter-clockwise with (x, y) the bottom-left
 * corner. Returns the advance in pixels. */
double plot_text(plot_image *im, double x, double y, const char *s, double size, int vertical,
                 plot_rgb c);
double plot_text_width(plot_image *im, const char *s, double size);
/* The viridis colour map, t in [0, 1]. */
plot_rgb plot_colormap(double t);
/* Finish the drawing and publish it at its path, atomically (then plot_image_free); held
 * (stap_plot_hold): kept complete, unpublished. */
int plot_write(plot_image *im, stap_error *err);

/* ---- pictures published together ---------------------------------------------------
 * Between stap_plot_hold and stap_plot_publish or stap_plot_discard, each picture this
 * thread writes is kept as its complete temporary, not published: stap_plot_publish
 * publishes them all, stap_plot_discard removes them — a set of pictures of which one
 * fails (a full disk) publishes none. More than STAP_PLOT_HELD_MAX is an error. */
#define STAP_PLOT_HELD_MAX 8
typedef struct stap_plot_held {
    int n;
    struct {
        char tmp[4096], path[4096];
        stap_write_mode mode;
    } item[STAP_PLOT_HELD_MAX];
} stap_plot_held;
void stap_plot_hold(stap_plot_held *held);
/* Publish every held picture in order; a failure removes the ones not yet published. */
int stap_plot_publish(stap_plot_held *held, stap_error *err);
void stap_plot_discard(stap_plot_held *held);

/* What part of a picture's data to show: xlim/ylim in the axes' own units (Hz, km, dB, sine
 * of azimuth); a limit with hi <= lo (e.g. {0, 0}) leaves that axis to the data. NULL: all
 * of it. */
typedef struct stap_plot_view {
    double xlim[2], ylim[2];
} stap_plot_view;

/* ---- charts ------------------------------------------------------------------------ */
typedef struct plot_marker {
    double x, y;   /* data coordinates */
} plot_marker;

typedef struct plot_guide {
    double x0, y0, x1, y1; /* a dotted white line between two data points */
} plot_guide;

/* A heat map: z is ny x nx row-major, row j spans y from y0 + j (y1-y0)/ny upwards,
 * column i spans x from x0 + i (x1-x0)/nx; coloured from zmin to zmax with a colour
 * bar labelled cbar_label; markers drawn as rings, guides as dotted lines over the map,
 * xmarks as ticks above it labelled xmark_label. */
typedef struct plot_heatmap {
    const char *title, *xlabel, *ylabel, *cbar_label;
    int nx, ny;
    const double *z;
    double x0, x1, y0, y1, zmin, zmax;
    const plot_marker *markers;
    size_t nmarkers;
    const plot_guide *guides;
    size_t nguides;
    const double *xmarks;
    size_t nxmarks;
    const char *xmark_label;
} plot_heatmap;
int plot_heatmap_file(const char *path, const plot_heatmap *hm, const stap_plot_view *view,
                      stap_write_mode mode, stap_error *err);
/* n (1..4) heat maps side by side on the first one's colour scale (zmin..zmax) and
 * colour bar, under one title, with a note (or NULL) at the bottom; each panel's title
 * may have a second line after '\n' (the y label is drawn on the first panel only). */
int plot_heatmaps_file(const char *path, const char *title, const char *note,
                       const plot_heatmap *hm, int n, const stap_plot_view *view,
                       stap_write_mode mode, stap_error *err);

typedef struct plot_series {
    const char *label;
    int n;
    const double *x, *y;
    plot_rgb color;
    int dashed;    /* dashed line                */
    int points;    /* mark the points with dots */
} plot_series;
typedef struct plot_lines {
    const char *title, *xlabel, *ylabel;
    int nseries;
    const plot_series *series;
    double x0, x1, y0, y1;
    int auto_floor; /* raise y0 to the curves within 40 dB of the highest (by median) */
} plot_lines;
int plot_lines_file(const char *path, const plot_lines *pl, const stap_plot_view *view,
                    stap_write_mode mode, stap_error *err);

/* ---- the radar pictures ------------------------------------------------------------- */
/* Angle–Doppler (Fourier) spectrum of the cube (C x P x R) averaged over the range
 * cells within half_window of range_cell: |sum_c sum_p wc[c] wp[p] x[c,p,r]
 * e^{-2 pi i (spacing c u + w p)}|^2 / (sum wc^2 sum wp^2) on a grid of sine-angle u in
 * [-1, 1] and Doppler w in [-1/2, 1/2), with Dolph–Chebyshev tapers of taper_db in
 * both dimensions; unit-power white noise is 0 dB. prf_hz > 0 labels Doppler in Hz. */
int stap_plot_angle_doppler(const char *path, const stap_cf32 *cube, int C, int P, int R,
                            int range_cell, int half_window, double spacing, double prf_hz,
                            double taper_db, const stap_plot_view *view, stap_write_mode mode,
                            stap_error *err);
/* SINR loss against Doppler for one beam: the optimum, the adaptive (mean over the
 * segments) and the optimum times the RMB expectation. beam_note (or NULL) follows the beam
 * in the title (e.g. its direction, "az 20°, el 0°"). */
int stap_plot_sinr(const char *path, const stap_sinr_result *res, int beam, const char *beam_note,
                   const stap_plot_view *view, stap_write_mode mode, stap_error *err);
/* Angle–Doppler response of weight vectors (datasets/scene_response.h computes them):
 * panels side by side, each |w^H s(u, f)|^2 in dB over its own peak on one colour scale
 * floor_db..0, on the grid u_i = -1 + 2 i / (nu - 1), f_j = -1/2 + j / nf (cycles per
 * pulse); the look point (look_u, look_f) ringed, the jammers' angles marked "J" above
 * the panels, the clutter ridge f = ridge_slope u (wrapped into [-1/2, 1/2)) dotted. */
typedef struct stap_response_picture {
    const char *title;
    int npanels;                 /* 1..2                                              */
    const double *panel[2];      /* nf x nu each, linear                              */
    const char *panel_title[2];  /* a second line (after '\n') is allowed             */
    int nu, nf;                  /* nu >= 2, nf >= 1                                  */
    double look_u, look_f;
    double floor_db;             /* < 0, e.g. -60                                     */
    const double *jammer_u;
    int njammers;
    double ridge_slope;          /* beta (d/lambda); NAN or 0: no ridge drawn         */
} stap_response_picture;
int stap_plot_response(const char *path, const stap_response_picture *pic,
                       const stap_plot_view *view, stap_write_mode mode, stap_error *err);
/* SINR loss against Doppler of n tables (1..STAP_PLOT_SINR_MAX_TABLES; e.g. Q = 1 and
 * Q = 3 runs on one scene) on one plot: table k's adaptive loss (mean over segments) for
 * beam beams[k], solid, labelled labels[k], and its optimum dashed in the same colour,
 * labelled optimum_labels[k] (optimum_labels or an entry NULL: "optimum LABEL"; drawn
 * once where tables share the same optimum curve: it depends on the scene, the bins, Q,
 * the window and the beam, not on K). Doppler in Hz when every table has the same PRF,
 * else in cycles per pulse. */
#define STAP_PLOT_SINR_MAX_TABLES 8
int stap_plot_sinr_compare(const char *path, const stap_sinr_result *const *res,
                           const int *beams, const char *const *labels,
                           const char *const *optimum_labels, int n,
                           const stap_plot_view *view, stap_write_mode mode, stap_error *err);
/* Range–Doppler map |y|^2 (dB over each Doppler bin's median) of beam `beam` of the output
 * y (B x D x R), with the detections of that beam ringed; range_m (R ranges in metres,
 * evenly spaced, or NULL: range cells) labels the range axis in km. title_note (or NULL)
 * is added to the title (e.g. "CPI 7"). */
int stap_plot_range_doppler(const char *path, const stap_cf32 *y, int B, int D, int R, int beam,
                            const stap_detection *det, size_t ndet, double prf_hz,
                            const double *range_m, const char *title_note,
                            const stap_plot_view *view, stap_write_mode mode, stap_error *err);

#ifdef __cplusplus
}
#endif

#endif
