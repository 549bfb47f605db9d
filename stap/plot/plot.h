/* plot: rtstap's pictures — a small RGB raster with axes, ticks, labels, a colour bar
 * and a 5x7 bitmap font (font5x7.h), written as PNG through libpng; and the three
 * radar pictures built on it: the angle–Doppler spectrum of an input cube at a range
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

/* ---- raster ------------------------------------------------------------------------ */
typedef struct plot_image {
    int w, h;
    uint8_t *rgb; /* h rows of w pixels, 3 bytes each, top row first */
} plot_image;

typedef struct plot_rgb { uint8_t r, g, b; } plot_rgb;

int plot_image_create(plot_image *im, int w, int h, plot_rgb background, stap_error *err);
void plot_image_free(plot_image *im);
void plot_fill_rect(plot_image *im, int x0, int y0, int x1, int y1, plot_rgb c); /* [x0,x1) */
void plot_line(plot_image *im, int x0, int y0, int x1, int y1, int width, plot_rgb c);
/* Text with the 5x7 font at integer scale (glyph cell 6*scale x 8*scale); (x, y) is the
 * top-left corner; vertical != 0 draws it rotated 90 degrees counter-clockwise with
 * (x, y) the bottom-left corner. Returns the advance in pixels. */
int plot_text(plot_image *im, int x, int y, const char *s, int scale, int vertical, plot_rgb c);
int plot_text_width(const char *s, int scale);
/* The viridis colour map, t in [0, 1]. */
plot_rgb plot_colormap(double t);
/* Write im to path as an 8-bit RGB PNG, atomically. */
int plot_png_write(const char *path, const plot_image *im, stap_write_mode mode, stap_error *err);

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
int plot_heatmap_png(const char *path, const plot_heatmap *hm, stap_write_mode mode,
                     stap_error *err);
/* n (1..4) heat maps side by side on the first one's colour scale (zmin..zmax) and
 * colour bar, under one title, with a note (or NULL) at the bottom; each panel's title
 * may have a second line after '\n' (the y label is drawn on the first panel only). */
int plot_heatmaps_png(const char *path, const char *title, const char *note,
                      const plot_heatmap *hm, int n, stap_write_mode mode, stap_error *err);

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
} plot_lines;
int plot_lines_png(const char *path, const plot_lines *pl, stap_write_mode mode, stap_error *err);

/* ---- the radar pictures ------------------------------------------------------------- */
/* Angle–Doppler (Fourier) spectrum of the cube (C x P x R) averaged over the range
 * cells within half_window of range_cell: |sum_c sum_p wc[c] wp[p] x[c,p,r]
 * e^{-2 pi i (spacing c u + w p)}|^2 / (sum wc^2 sum wp^2) on a grid of sine-angle u in
 * [-1, 1] and Doppler w in [-1/2, 1/2), with Dolph–Chebyshev tapers of taper_db in
 * both dimensions; unit-power white noise is 0 dB. prf_hz > 0 labels Doppler in Hz. */
int stap_plot_angle_doppler(const char *path, const stap_cf32 *cube, int C, int P, int R,
                            int range_cell, int half_window, double spacing, double prf_hz,
                            double taper_db, stap_write_mode mode, stap_error *err);
/* SINR loss against Doppler for one beam: the optimum, the adaptive (mean over the
 * segments) and the optimum times the RMB expectation. */
int stap_plot_sinr(const char *path, const stap_sinr_result *res, int beam, stap_write_mode mode,
                   stap_error *err);
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
int stap_plot_response(const char *path, const stap_response_picture *pic, stap_write_mode mode,
                       stap_error *err);
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
                           const char *const *optimum_labels, int n, stap_write_mode mode,
                           stap_error *err);
/* Range–Doppler map |y|^2 (dB over each Doppler bin's median) of beam `beam` of the output
 * y (B x D x R), with the detections of that beam ringed. */
int stap_plot_range_doppler(const char *path, const stap_cf32 *y, int B, int D, int R, int beam,
                            const stap_detection *det, size_t ndet, double prf_hz,
                            stap_write_mode mode, stap_error *err);

#ifdef __cplusplus
}
#endif

#endif
