/* plot: rtstap's pictures — a small RGB raster with axes, ticks, labels, a colour bar
 * and a 5x7 bitmap font (font5x7.h), written as PNG through libpng; and the three
 * radar pictures built on it: the angle–Doppler spectrum of an input cube at a range
 * cell, the SINR loss against Doppler, and the range–Doppler map of one output beam
 * with the CFAR detections marked. PNG files are published atomically (h5io.h's
 * rt_atomic_*): every writer takes the rt_write_mode (RT_WRITE_NEW: an existing file is
 * refused; RT_WRITE_REPLACE: replaced once the new one is complete). */
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

int plot_image_create(plot_image *im, int w, int h, plot_rgb background, rt_error *err);
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
int plot_png_write(const char *path, const plot_image *im, rt_write_mode mode, rt_error *err);

/* ---- charts ------------------------------------------------------------------------ */
typedef struct plot_marker {
    double x, y;   /* data coordinates */
} plot_marker;

/* A heat map: z is ny x nx row-major, row j spans y from y0 + j (y1-y0)/ny upwards,
 * column i spans x from x0 + i (x1-x0)/nx; coloured from zmin to zmax with a colour
 * bar labelled cbar_label; markers drawn as rings. */
typedef struct plot_heatmap {
    const char *title, *xlabel, *ylabel, *cbar_label;
    int nx, ny;
    const double *z;
    double x0, x1, y0, y1, zmin, zmax;
    const plot_marker *markers;
    size_t nmarkers;
} plot_heatmap;
int plot_heatmap_png(const char *path, const plot_heatmap *hm, rt_write_mode mode,
                     rt_error *err);

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
int plot_lines_png(const char *path, const plot_lines *pl, rt_write_mode mode, rt_error *err);

/* ---- the radar pictures ------------------------------------------------------------- */
/* Angle–Doppler (Fourier) spectrum of the cube (C x P x R) averaged over the range
 * cells within half_window of range_cell: |sum_c sum_p wc[c] wp[p] x[c,p,r]
 * e^{-2 pi i (spacing c u + w p)}|^2 / (sum wc^2 sum wp^2) on a grid of sine-angle u in
 * [-1, 1] and Doppler w in [-1/2, 1/2), with Dolph–Chebyshev tapers of taper_db in
 * both dimensions; unit-power white noise is 0 dB. prf_hz > 0 labels Doppler in Hz. */
int stap_plot_angle_doppler(const char *path, const cf32 *cube, int C, int P, int R,
                            int range_cell, int half_window, double spacing, double prf_hz,
                            double taper_db, rt_write_mode mode, rt_error *err);
/* SINR loss against Doppler for one beam: the optimum, the adaptive (mean over the
 * segments) and the optimum times the RMB expectation. */
int stap_plot_sinr(const char *path, const stap_sinr_result *res, int beam, rt_write_mode mode,
                   rt_error *err);
/* Range–Doppler map |y|^2 (dB over each Doppler bin's median) of beam `beam` of the output
 * y (B x D x R), with the detections of that beam ringed. */
int stap_plot_range_doppler(const char *path, const cf32 *y, int B, int D, int R, int beam,
                            const stap_detection *det, size_t ndet, double prf_hz,
                            rt_write_mode mode, rt_error *err);

#ifdef __cplusplus
}
#endif

#endif
