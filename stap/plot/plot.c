/* plot.c: raster drawing, PNG output and the three radar pictures of plot.h. */
#include "plot.h"

#include <errno.h>
#include <math.h>
#include <png.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "font5x7.h"
#include "h5io.h"

static const plot_rgb WHITE = {255, 255, 255}, BLACK = {0, 0, 0}, GRID = {225, 225, 225};
static const plot_rgb INK = {30, 30, 30};

/* ---- raster ------------------------------------------------------------------------ */
int plot_image_create(plot_image *im, int w, int h, plot_rgb bg, stap_error *err)
{
    im->w = w;
    im->h = h;
    im->rgb = malloc((size_t)w * h * 3);
    if (!im->rgb) return stap_fail(err, STAP_ENOMEM, "out of memory for a %d x %d image", w, h);
    for (size_t i = 0; i < (size_t)w * h; i++) {
        im->rgb[3 * i] = bg.r;
        im->rgb[3 * i + 1] = bg.g;
        im->rgb[3 * i + 2] = bg.b;
    }
    return STAP_OK;
}

void plot_image_free(plot_image *im)
{
    if (!im) return;
    free(im->rgb);
    im->rgb = NULL;
}

static inline void put(plot_image *im, int x, int y, plot_rgb c)
{
    if (x < 0 || y < 0 || x >= im->w || y >= im->h) return;
    uint8_t *p = im->rgb + ((size_t)y * im->w + x) * 3;
    p[0] = c.r;
    p[1] = c.g;
    p[2] = c.b;
}

void plot_fill_rect(plot_image *im, int x0, int y0, int x1, int y1, plot_rgb c)
{
    for (int y = y0; y < y1; y++)
        for (int x = x0; x < x1; x++) put(im, x, y, c);
}

/* Bresenham with a square pen; dash > 0: on for dash pixels, off for dash pixels.
 * The clip rectangle (cx0, cy0, cx1, cy1) bounds what is drawn. */
typedef struct {
    int x0, y0, x1, y1;
} clip_rect;

static void line_ex(plot_image *im, int x0, int y0, int x1, int y1, int width, plot_rgb c,
                    int dash, int *phase, const clip_rect *clip)
{
    int dx = abs(x1 - x0), dy = -abs(y1 - y0), sx = x0 < x1 ? 1 : -1, sy = y0 < y1 ? 1 : -1;
    int e = dx + dy, lo = -(width - 1) / 2, hi = width / 2;
    for (;;) {
        int on = dash <= 0 || ((*phase / dash) % 2 == 0);
        (*phase)++;
        if (on)
            for (int a = lo; a <= hi; a++)
                for (int b = lo; b <= hi; b++) {
                    int x = x0 + a, y = y0 + b;
                    if (clip && (x < clip->x0 || x >= clip->x1 || y < clip->y0 || y >= clip->y1))
                        continue;
                    put(im, x, y, c);
                }
        if (x0 == x1 && y0 == y1) break;
        int e2 = 2 * e;
        if (e2 >= dy) {
            e += dy;
            x0 += sx;
        }
        if (e2 <= dx) {
            e += dx;
            y0 += sy;
        }
    }
}

void plot_line(plot_image *im, int x0, int y0, int x1, int y1, int width, plot_rgb c)
{
    int phase = 0;
    line_ex(im, x0, y0, x1, y1, width, c, 0, &phase, NULL);
}

int plot_text_width(const char *s, int scale) { return (int)strlen(s) * 6 * scale - scale; }

int plot_text(plot_image *im, int x, int y, const char *s, int scale, int vertical, plot_rgb c)
{
    int k = 0;
    for (const char *p = s; *p; p++, k++) {
        int ch = (unsigned char)*p;
        if (ch < FONT5X7_FIRST || ch > FONT5X7_LAST) ch = '?';
        const char *const *g = font5x7[ch - FONT5X7_FIRST];
        for (int gy = 0; gy < 7; gy++)
            for (int gx = 0; gx < 5; gx++) {
                if (g[gy][gx] != '#') continue;
                for (int a = 0; a < scale; a++)
                    for (int b = 0; b < scale; b++) {
                        if (!vertical)
                            put(im, x + (k * 6 + gx) * scale + a, y + gy * scale + b, c);
                        else /* rotated CCW: text runs upwards from (x, y) */
                            put(im, x + gy * scale + b, y - (k * 6 + gx) * scale - a - 1, c);
                    }
            }
    }
    return plot_text_width(s, scale);
}

plot_rgb plot_colormap(double t)
{
    /* viridis, sampled at nine points and interpolated linearly */
    static const uint8_t v[9][3] = {{68, 1, 84},    {71, 44, 122},  {59, 81, 139},
                                    {44, 113, 142}, {33, 144, 141}, {39, 173, 129},
                                    {92, 200, 99},  {170, 220, 50}, {253, 231, 37}};
    if (!(t > 0)) t = 0;
    if (t > 1) t = 1;
    double s = t * 8;
    int i = (int)s;
    if (i >= 8) i = 7;
    double f = s - i;
    plot_rgb c = {(uint8_t)lround(v[i][0] + f * (v[i + 1][0] - v[i][0])),
                  (uint8_t)lround(v[i][1] + f * (v[i + 1][1] - v[i][1])),
                  (uint8_t)lround(v[i][2] + f * (v[i + 1][2] - v[i][2]))};
    return c;
}

/* libpng reports errors by longjmp */
static void png_error_fn(png_structp png, png_const_charp msg)
{
    const int e = errno; /* a failed fwrite: the system's words, not libpng's "Write Error" */
    char *buf = png_get_error_ptr(png);
    snprintf(buf, 256, "%s", e && !strcmp(msg, "Write Error") ? strerror(e) : msg);
    png_longjmp(png, 1);
}
static void png_warning_fn(png_structp png, png_const_charp msg)
{
    (void)png;
    (void)msg;
}

int plot_png_write(const char *path, const plot_image *im, stap_write_mode mode, stap_error *err)
{
    char tmp[4096];
    int st = stap_atomic_begin(path, tmp, sizeof tmp, mode, err);
    if (st) return st;
    FILE *f = fopen(tmp, "wb");
    if (!f) {
        stap_atomic_abort(tmp);
        return stap_fail(err, STAP_EIO, "cannot write '%s' (as '%s')", path, tmp);
    }
    char msg[256] = "";
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, msg, png_error_fn,
                                              png_warning_fn);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    png_bytep *rows = malloc(sizeof(png_bytep) * im->h);
    volatile int bad = !png || !info || !rows;
    if (!bad) {
        if (setjmp(png_jmpbuf(png))) {
            bad = 1;
        } else {
            png_init_io(png, f);
            png_set_IHDR(png, info, (png_uint_32)im->w, (png_uint_32)im->h, 8, PNG_COLOR_TYPE_RGB,
                         PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
                         PNG_FILTER_TYPE_DEFAULT);
            png_text txt = {0};
            txt.compression = PNG_TEXT_COMPRESSION_NONE;
            txt.key = (png_charp) "Software";
            txt.text = (png_charp) "rtstap " RTSTAP_VERSION;
            png_set_text(png, info, &txt, 1);
            for (int y = 0; y < im->h; y++) rows[y] = im->rgb + (size_t)y * im->w * 3;
            png_set_rows(png, info, rows);
            png_write_png(png, info, PNG_TRANSFORM_IDENTITY, NULL);
        }
    }
    if (png) png_destroy_write_struct(&png, info ? &info : NULL);
    free(rows);
    errno = 0;
    if ((fflush(f) != 0 || fclose(f) != 0) && !bad) {
        bad = 1;
        snprintf(msg, sizeof msg, "%s", errno ? strerror(errno) : "write error");
    } else if (bad) {
        fclose(f);
    }
    if (bad) {
        stap_atomic_abort(tmp);
        return stap_fail(err, STAP_EIO, "cannot write '%s': %s", path, msg[0] ? msg : "libpng failed");
    }
    return stap_atomic_commit(tmp, path, mode, err);
}

/* ---- axes ------------------------------------------------------------------------- */
enum { TXT = 2 };                 /* text scale: glyphs 10 x 14 pixels                 */

typedef struct {
    int x0, y0, x1, y1;           /* plot area in pixels, [x0, x1) x [y0, y1)          */
    double dx0, dx1, dy0, dy1;    /* data range                                         */
} frame;

static int fx(const frame *f, double x)
{
    return f->x0 + (int)lround((x - f->dx0) / (f->dx1 - f->dx0) * (f->x1 - f->x0 - 1));
}
static int fy(const frame *f, double y)
{
    return f->y1 - 1 - (int)lround((y - f->dy0) / (f->dy1 - f->dy0) * (f->y1 - f->y0 - 1));
}

/* Ticks at 1, 2 or 5 times a power of ten, about `target` of them. */
static int nice_ticks(double lo, double hi, int target, double *t, int max, double *step_out)
{
    double raw = (hi - lo) / target, mag = pow(10, floor(log10(raw))), f = raw / mag;
    double step = (f < 1.5 ? 1 : f < 3 ? 2 : f < 7 ? 5 : 10) * mag;
    int n = 0;
    for (double v = ceil(lo / step - 1e-9) * step; v <= hi + 1e-9 * step && n < max; v += step)
        t[n++] = fabs(v) < 1e-9 * step ? 0 : v;
    *step_out = step;
    return n;
}

static void tick_label(char *buf, size_t len, double v, double step)
{
    int dec = step >= 1 ? 0 : (int)ceil(-log10(step) - 1e-9);
    if (dec > 6) dec = 6;
    snprintf(buf, len, "%.*f", dec, v);
}

/* Box, ticks, tick labels, grid (optional), axis labels and title. */
static void draw_axes(plot_image *im, const frame *f, const char *title, const char *xlabel,
                      const char *ylabel, int grid)
{
    double t[64], step;
    char lab[64];
    /* about one x tick per 80 pixels (at most 8): the labels must not touch */
    int tx = (f->x1 - f->x0) / 80;
    int n = nice_ticks(f->dx0, f->dx1, tx < 2 ? 2 : tx > 8 ? 8 : tx, t, 64, &step);
    for (int i = 0; i < n; i++) {
        int x = fx(f, t[i]);
        if (grid) plot_line(im, x, f->y0, x, f->y1 - 1, 1, GRID);
        plot_line(im, x, f->y1, x, f->y1 + 6, 2, INK);
        tick_label(lab, sizeof lab, t[i], step);
        plot_text(im, x - plot_text_width(lab, TXT) / 2, f->y1 + 12, lab, TXT, 0, INK);
    }
    n = nice_ticks(f->dy0, f->dy1, 7, t, 64, &step);
    for (int i = 0; i < n; i++) {
        int y = fy(f, t[i]);
        if (grid) plot_line(im, f->x0, y, f->x1 - 1, y, 1, GRID);
        plot_line(im, f->x0 - 7, y, f->x0 - 1, y, 2, INK);
        tick_label(lab, sizeof lab, t[i], step);
        plot_text(im, f->x0 - 12 - plot_text_width(lab, TXT), y - 7, lab, TXT, 0, INK);
    }
    /* box */
    plot_line(im, f->x0 - 1, f->y0 - 1, f->x1, f->y0 - 1, 2, INK);
    plot_line(im, f->x0 - 1, f->y1, f->x1, f->y1, 2, INK);
    plot_line(im, f->x0 - 1, f->y0 - 1, f->x0 - 1, f->y1, 2, INK);
    plot_line(im, f->x1, f->y0 - 1, f->x1, f->y1, 2, INK);
    if (xlabel)
        plot_text(im, (f->x0 + f->x1) / 2 - plot_text_width(xlabel, TXT) / 2, f->y1 + 40, xlabel,
                  TXT, 0, INK);
    if (ylabel)
        plot_text(im, 14, (f->y0 + f->y1) / 2 + plot_text_width(ylabel, TXT) / 2, ylabel, TXT, 1,
                  INK);
    if (title) plot_text(im, f->x0, 16, title, TXT, 0, BLACK);
}

static void ring(plot_image *im, int cx, int cy, double r, double width, plot_rgb c)
{
    int R = (int)ceil(r + width);
    for (int y = -R; y <= R; y++)
        for (int x = -R; x <= R; x++) {
            double d = sqrt((double)x * x + (double)y * y);
            if (d >= r - width / 2 && d <= r + width / 2) put(im, cx + x, cy + y, c);
        }
}

/* The cells of hm inside frame f, its guides (dotted) and markers (rings). */
static void draw_heatmap(plot_image *im, const frame *f, const plot_heatmap *hm)
{
    double zr = hm->zmax > hm->zmin ? hm->zmax - hm->zmin : 1;
    for (int y = f->y0; y < f->y1; y++) {
        double yd = hm->y0 + (f->y1 - 1 - y + 0.5) / (f->y1 - f->y0) * (hm->y1 - hm->y0);
        int j = (int)floor((yd - hm->y0) / (hm->y1 - hm->y0) * hm->ny);
        if (j < 0) j = 0;
        if (j >= hm->ny) j = hm->ny - 1;
        for (int x = f->x0; x < f->x1; x++) {
            double xd = hm->x0 + (x - f->x0 + 0.5) / (f->x1 - f->x0) * (hm->x1 - hm->x0);
            int i = (int)floor((xd - hm->x0) / (hm->x1 - hm->x0) * hm->nx);
            if (i < 0) i = 0;
            if (i >= hm->nx) i = hm->nx - 1;
            double z = hm->z[(size_t)j * hm->nx + i];
            put(im, x, y, plot_colormap(isfinite(z) ? (z - hm->zmin) / zr : 0));
        }
    }
    clip_rect clip = {f->x0, f->y0, f->x1, f->y1};
    for (size_t k = 0; k < hm->nguides; k++) {
        const plot_guide *g = &hm->guides[k];
        int phase = 0;
        line_ex(im, fx(f, g->x0), fy(f, g->y0), fx(f, g->x1), fy(f, g->y1), 1, WHITE, 3, &phase,
                &clip);
    }
    for (size_t k = 0; k < hm->nmarkers; k++) {
        int cx = fx(f, hm->markers[k].x), cy = fy(f, hm->markers[k].y);
        ring(im, cx, cy, 10, 3.5, BLACK);
        ring(im, cx, cy, 10, 1.8, (plot_rgb){255, 60, 60});
    }
    /* labelled ticks above the frame */
    for (size_t k = 0; k < hm->nxmarks; k++) {
        int x = fx(f, hm->xmarks[k]);
        for (int r = 0; r < 9; r++) plot_fill_rect(im, x - (8 - r) / 2, f->y0 - 14 + r,
                                                   x + (8 - r) / 2 + 1, f->y0 - 13 + r, INK);
        if (hm->xmark_label)
            plot_text(im, x - plot_text_width(hm->xmark_label, TXT) / 2, f->y0 - 32,
                      hm->xmark_label, TXT, 0, INK);
    }
}

/* A vertical colour bar in cb (its data range zmin..zmax), ticks, and label at x_label. */
static void draw_colorbar(plot_image *im, const frame *cb, const char *label, int x_label)
{
    for (int y = cb->y0; y < cb->y1; y++) {
        double t = (double)(cb->y1 - 1 - y) / (cb->y1 - cb->y0 - 1);
        plot_fill_rect(im, cb->x0, y, cb->x1, y + 1, plot_colormap(t));
    }
    plot_line(im, cb->x0 - 1, cb->y0 - 1, cb->x1, cb->y0 - 1, 1, INK);
    plot_line(im, cb->x0 - 1, cb->y1, cb->x1, cb->y1, 1, INK);
    plot_line(im, cb->x0 - 1, cb->y0 - 1, cb->x0 - 1, cb->y1, 1, INK);
    plot_line(im, cb->x1, cb->y0 - 1, cb->x1, cb->y1, 1, INK);
    double t[64], step;
    char lab[64];
    int n = nice_ticks(cb->dy0, cb->dy1, 8, t, 64, &step);
    for (int i = 0; i < n; i++) {
        int y = fy(cb, t[i]);
        plot_line(im, cb->x1, y, cb->x1 + 6, y, 2, INK);
        tick_label(lab, sizeof lab, t[i], step);
        plot_text(im, cb->x1 + 10, y - 7, lab, TXT, 0, INK);
    }
    if (label)
        plot_text(im, x_label, (cb->y0 + cb->y1) / 2 + plot_text_width(label, TXT) / 2, label,
                  TXT, 1, INK);
}

static int heatmap_ok(const char *path, const plot_heatmap *hm, stap_error *err)
{
    if (hm->nx < 1 || hm->ny < 1 || !(hm->x1 > hm->x0) || !(hm->y1 > hm->y0))
        return stap_fail(err, STAP_EINVAL, "heat map '%s': empty grid or range", path);
    return STAP_OK;
}

int plot_heatmap_png(const char *path, const plot_heatmap *hm, stap_write_mode mode,
                     stap_error *err)
{
    int st = heatmap_ok(path, hm, err);
    if (st) return st;
    plot_image im;
    if ((st = plot_image_create(&im, 980, 660, WHITE, err))) return st;
    frame f = {110, 60, 780, 570, hm->x0, hm->x1, hm->y0, hm->y1};
    draw_heatmap(&im, &f, hm);
    draw_axes(&im, &f, hm->title, hm->xlabel, hm->ylabel, 0);
    frame cb = {f.x1 + 40, f.y0, f.x1 + 70, f.y1, 0, 1, hm->zmin, hm->zmax};
    draw_colorbar(&im, &cb, hm->cbar_label, im.w - 30);
    st = plot_png_write(path, &im, mode, err);
    plot_image_free(&im);
    return st;
}

int plot_heatmaps_png(const char *path, const char *title, const char *note,
                      const plot_heatmap *hm, int n, stap_write_mode mode, stap_error *err)
{
    if (n < 1 || n > 4)
        return stap_fail(err, STAP_EINVAL, "heat maps '%s': %d panels (1 to 4)", path, n);
    int st;
    for (int k = 0; k < n; k++)
        if ((st = heatmap_ok(path, &hm[k], err))) return st;
    /* panels of 500 x 460 pixels, 80 apart (the next one's tick labels); the colour bar
     * of the first panel's scale on the right */
    const int pw = 500, gap = 80, x0 = 110, y0 = 120, y1 = 580;
    const int cbx = x0 + n * pw + (n - 1) * gap + 40;
    plot_image im;
    if ((st = plot_image_create(&im, cbx + 150, note ? 690 : 660, WHITE, err))) return st;
    if (title) plot_text(&im, x0, 12, title, TXT, 0, BLACK);
    if (note) plot_text(&im, x0, 660, note, TXT, 0, INK);
    for (int k = 0; k < n; k++) {
        frame f = {x0 + k * (pw + gap), y0, x0 + k * (pw + gap) + pw, y1,
                   hm[k].x0, hm[k].x1, hm[k].y0, hm[k].y1};
        plot_heatmap p = hm[k];
        p.zmin = hm[0].zmin;
        p.zmax = hm[0].zmax;
        draw_heatmap(&im, &f, &p);
        draw_axes(&im, &f, NULL, p.xlabel, k == 0 ? p.ylabel : NULL, 0);
        /* the panel's title: up to two lines, split at '\n' */
        if (p.title) {
            const char *nl = strchr(p.title, '\n');
            char line[160];
            snprintf(line, sizeof line, "%.*s", nl ? (int)(nl - p.title) : (int)strlen(p.title),
                     p.title);
            plot_text(&im, f.x0, 42, line, TXT, 0, BLACK);
            if (nl) plot_text(&im, f.x0, 64, nl + 1, TXT, 0, INK);
        }
    }
    frame cb = {cbx, y0, cbx + 30, y1, 0, 1, hm[0].zmin, hm[0].zmax};
    draw_colorbar(&im, &cb, hm[0].cbar_label, im.w - 30);
    st = plot_png_write(path, &im, mode, err);
    plot_image_free(&im);
    return st;
}

int plot_lines_png(const char *path, const plot_lines *pl, stap_write_mode mode, stap_error *err)
{
    if (!(pl->x1 > pl->x0) || !(pl->y1 > pl->y0))
        return stap_fail(err, STAP_EINVAL, "line plot '%s': empty range", path);
    /* the legend: rows of entries above the plot area, as many rows as it needs */
    const int W = 980, row_h = 26;
    int rows = 1;
    for (int s = 0, lx = 110; s < pl->nseries; s++) {
        int w = 44 + plot_text_width(pl->series[s].label, TXT) + 30;
        if (lx > 110 && lx + w - 30 > W - 20) {
            rows++;
            lx = 110;
        }
        lx += w;
    }
    const int extra = (rows - 1) * row_h;
    plot_image im;
    int st = plot_image_create(&im, W, 640 + extra, WHITE, err);
    if (st) return st;
    frame f = {110, 100 + extra, 950, 550 + extra, pl->x0, pl->x1, pl->y0, pl->y1};
    draw_axes(&im, &f, pl->title, pl->xlabel, pl->ylabel, 1);
    clip_rect clip = {f.x0, f.y0, f.x1, f.y1};
    int lx = f.x0, ly = 72;
    for (int s = 0; s < pl->nseries; s++) {
        const plot_series *se = &pl->series[s];
        int phase = 0;
        for (int i = 0; i + 1 < se->n; i++) {
            if (!isfinite(se->y[i]) || !isfinite(se->y[i + 1])) continue;
            line_ex(&im, fx(&f, se->x[i]), fy(&f, se->y[i]), fx(&f, se->x[i + 1]),
                    fy(&f, se->y[i + 1]), 3, se->color, se->dashed ? 9 : 0, &phase, &clip);
        }
        if (se->points)
            for (int i = 0; i < se->n; i++)
                if (isfinite(se->y[i])) {
                    int cx = fx(&f, se->x[i]), cy = fy(&f, se->y[i]);
                    if (cx >= f.x0 && cx < f.x1 && cy >= f.y0 && cy < f.y1)
                        plot_fill_rect(&im, cx - 3, cy - 3, cx + 4, cy + 4, se->color);
                }
        /* legend entry */
        int phase2 = 0, w = 44 + plot_text_width(se->label, TXT) + 30;
        if (lx > f.x0 && lx + w - 30 > W - 20) {
            lx = f.x0;
            ly += row_h;
        }
        line_ex(&im, lx, ly, lx + 36, ly, 3, se->color, se->dashed ? 9 : 0, &phase2, NULL);
        plot_text(&im, lx + 44, ly - 7, se->label, TXT, 0, INK);
        lx += w;
    }
    st = plot_png_write(path, &im, mode, err);
    plot_image_free(&im);
    return st;
}

/* ---- the radar pictures ------------------------------------------------------------- */
static double db10(double x) { return 10 * log10(x > 1e-30 ? x : 1e-30); }

static int taper(int n, double db, double *w, stap_error *err)
{
    stap_config c;
    stap_config_defaults(&c);
    c.pulses = n;
    c.window = STAP_WINDOW_CHEBYSHEV;
    c.chebyshev_db = db;
    float *wf = malloc(sizeof(float) * n);
    if (!wf) return stap_fail(err, STAP_ENOMEM, "out of memory");
    int st = stap_window(&c, wf, err);
    for (int i = 0; i < n; i++) w[i] = wf[i];
    free(wf);
    return st;
}

int stap_plot_angle_doppler(const char *path, const stap_cf32 *cube, int C, int P, int R, int rc,
                            int half, double spacing, double prf_hz, double taper_db,
                            stap_write_mode mode, stap_error *err)
{
    if (rc < 0 || rc >= R)
        return stap_fail(err, STAP_EINVAL, "range cell %d outside 0..%d", rc, R - 1);
    const int nu = 240, nf = 200;
    int r0 = rc - half < 0 ? 0 : rc - half, r1 = rc + half >= R ? R - 1 : rc + half;
    double *wc = malloc(sizeof(double) * C), *wp = malloc(sizeof(double) * P);
    stap_cf64 *tw_p = malloc(sizeof(stap_cf64) * (size_t)nf * P), *tw_c = malloc(sizeof(stap_cf64) * (size_t)nu * C);
    stap_cf64 *T = malloc(sizeof(stap_cf64) * (size_t)C * nf);
    double *S = calloc((size_t)nu * nf, sizeof(double));
    int st = STAP_OK;
    if (!wc || !wp || !tw_p || !tw_c || !T || !S) {
        st = stap_fail(err, STAP_ENOMEM, "out of memory for the angle-Doppler spectrum");
        goto out;
    }
    if ((st = taper(C, taper_db, wc, err)) || (st = taper(P, taper_db, wp, err))) goto out;
    double ec = 0, ep = 0;
    for (int c = 0; c < C; c++) ec += wc[c] * wc[c];
    for (int p = 0; p < P; p++) ep += wp[p] * wp[p];
    for (int j = 0; j < nf; j++) {
        double f = -0.5 + (j + 0.5) / nf;
        for (int p = 0; p < P; p++) tw_p[(size_t)j * P + p] = wp[p] * cexp(-2 * M_PI * I * f * p);
    }
    for (int i = 0; i < nu; i++) {
        double u = -1 + (i + 0.5) * 2.0 / nu;
        for (int c = 0; c < C; c++)
            tw_c[(size_t)i * C + c] = wc[c] * cexp(-2 * M_PI * I * spacing * c * u);
    }
    for (int r = r0; r <= r1; r++) {
        for (int c = 0; c < C; c++)
            for (int j = 0; j < nf; j++) {
                stap_cf64 acc = 0;
                const stap_cf64 *tw = tw_p + (size_t)j * P;
                for (int p = 0; p < P; p++) acc += tw[p] * cube[((size_t)c * P + p) * R + r];
                T[(size_t)c * nf + j] = acc;
            }
        for (int j = 0; j < nf; j++)
            for (int i = 0; i < nu; i++) {
                stap_cf64 acc = 0;
                const stap_cf64 *tw = tw_c + (size_t)i * C;
                for (int c = 0; c < C; c++) acc += tw[c] * T[(size_t)c * nf + j];
                S[(size_t)j * nu + i] += creal(acc * conj(acc));
            }
    }
    double zmax = -INFINITY;
    for (size_t k = 0; k < (size_t)nu * nf; k++) {
        S[k] = db10(S[k] / ((r1 - r0 + 1) * ec * ep));
        if (S[k] > zmax) zmax = S[k];
    }
    char title[160], ylabel[64];
    snprintf(title, sizeof title, "Angle-Doppler spectrum, range cells %d-%d (Chebyshev %g dB tapers)",
             r0, r1, taper_db);
    double yscale = prf_hz > 0 ? prf_hz : 1;
    snprintf(ylabel, sizeof ylabel, "%s", prf_hz > 0 ? "Doppler (Hz)" : "Doppler (cycles/pulse)");
    plot_heatmap hm = {title, "sin(azimuth)", ylabel, "power over noise (dB)", nu, nf, S,
                       -1, 1, -0.5 * yscale, 0.5 * yscale, -5, ceil(zmax / 5) * 5, NULL, 0,
                       NULL, 0, NULL, 0, NULL};
    if (hm.zmax <= hm.zmin) hm.zmax = hm.zmin + 10;
    st = plot_heatmap_png(path, &hm, mode, err);
out:
    free(wc);
    free(wp);
    free(tw_p);
    free(tw_c);
    free(T);
    free(S);
    return st;
}

int stap_plot_response(const char *path, const stap_response_picture *pic, stap_write_mode mode,
                       stap_error *err)
{
    const int nu = pic->nu, nf = pic->nf, np = pic->npanels;
    if (np < 1 || np > 2 || nu < 2 || nf < 1 || !(pic->floor_db < 0))
        return stap_fail(err, STAP_EINVAL, "response picture '%s': %d panels of %d x %d, floor %g "
                         "dB (need 1 or 2 panels, nu >= 2, nf >= 1, floor < 0)", path, np, nu, nf,
                         pic->floor_db);
    const size_t n = (size_t)nu * nf;
    double *z = malloc(sizeof(double) * n * np);
    /* the ridge: one segment per wrap, u in [(k - 1/2) / slope, (k + 1/2) / slope] */
    plot_guide guides[64];
    size_t ng = 0;
    const double sl = pic->ridge_slope;
    if (isfinite(sl) && sl != 0) {
        double kmax = ceil(fabs(sl) + 0.5);
        for (double k = -kmax; k <= kmax && ng < 64; k++) {
            double ua = (k - 0.5) / sl, ub = (k + 0.5) / sl;
            if (ua > ub) {
                double t = ua;
                ua = ub;
                ub = t;
            }
            ua = fmax(ua, -1);
            ub = fmin(ub, 1);
            if (ub <= ua) continue;
            /* stop just inside the top edge (f = +1/2 belongs to the next wrap) */
            double e = 1e-9 / fabs(sl);
            guides[ng++] = (plot_guide){ua + e, sl * (ua + e) - k, ub - e, sl * (ub - e) - k};
        }
    }
    if (!z) return stap_fail(err, STAP_ENOMEM, "out of memory for the response picture");
    plot_marker look = {pic->look_u, pic->look_f};
    plot_heatmap hm[2];
    char titles[2][200];
    const double du = 2.0 / (nu - 1), df = 1.0 / nf;
    for (int k = 0; k < np; k++) {
        const double *g = pic->panel[k];
        double *zk = z + n * k, peak = 0;
        for (size_t i = 0; i < n; i++) peak = fmax(peak, g[i]);
        for (size_t i = 0; i < n; i++) zk[i] = peak > 0 ? db10(g[i] / peak) : -INFINITY;
        /* the response at the grid point nearest the look point, over the peak */
        int il = (int)lround((pic->look_u + 1) / du), jl = (int)lround((pic->look_f + 0.5) / df);
        il = il < 0 ? 0 : il >= nu ? nu - 1 : il;
        jl = ((jl % nf) + nf) % nf;
        snprintf(titles[k], sizeof titles[k], "%s\nlook point %.1f dB", pic->panel_title[k]
                 ? pic->panel_title[k] : "", zk[(size_t)jl * nu + il]);
        hm[k] = (plot_heatmap){.title = titles[k],
                               .xlabel = "sine-space angle u",
                               .ylabel = "Doppler f (cycles/pulse)",
                               .cbar_label = "dB over each panel's peak",
                               .nx = nu,
                               .ny = nf,
                               .z = zk,
                               .x0 = -1 - du / 2,
                               .x1 = 1 + du / 2,
                               .y0 = -0.5 - df / 2,
                               .y1 = 0.5 - df / 2,
                               .zmin = pic->floor_db,
                               .zmax = 0,
                               .markers = &look,
                               .nmarkers = 1,
                               .guides = guides,
                               .nguides = ng,
                               .xmarks = pic->jammer_u,
                               .nxmarks = pic->njammers > 0 ? (size_t)pic->njammers : 0,
                               .xmark_label = "J"};
    }
    char note[200];
    int len = snprintf(note, sizeof note, "ring: look direction at the bin's Doppler%s",
                       pic->njammers > 0 ? "   J: jammers" : "");
    if (ng && len > 0 && (size_t)len < sizeof note)
        snprintf(note + len, sizeof note - len, "   dotted: clutter ridge f = %.3f u", sl);
    int st = plot_heatmaps_png(path, pic->title, note, hm, np, mode, err);
    free(z);
    return st;
}

typedef struct {
    double f;
    int d;
} bin_order;
static int cmp_bin(const void *a, const void *b)
{
    double x = ((const bin_order *)a)->f, y = ((const bin_order *)b)->f;
    return x < y ? -1 : x > y;
}

/* One table's curves for one beam in Doppler order: x (times scale), the optimum loss yo,
 * the adaptive loss ya (mean over the segments) and the clairvoyant loss yg, in dB. */
static int sinr_curves(const stap_sinr_result *res, int beam, double scale, double *x,
                       double *yo, double *ya, double *yg, stap_error *err)
{
    const int D = res->D;
    bin_order *o = malloc(sizeof(bin_order) * D);
    if (!o) return stap_fail(err, STAP_ENOMEM, "out of memory");
    for (int d = 0; d < D; d++) o[d] = (bin_order){res->doppler[d], d};
    qsort(o, D, sizeof *o, cmp_bin);
    for (int k = 0; k < D; k++) {
        int d = o[k].d;
        double lo = res->optimum_loss[(size_t)d * res->B + beam];
        double lg = res->algorithm_loss[(size_t)d * res->B + beam];
        x[k] = o[k].f * scale;
        yo[k] = db10(lo);
        ya[k] = db10(stap_sinr_adaptive_mean(res, d, beam));
        if (yg) yg[k] = db10(lg);
    }
    free(o);
    return STAP_OK;
}

int stap_plot_sinr(const char *path, const stap_sinr_result *res, int beam, stap_write_mode mode,
                   stap_error *err)
{
    if (beam < 0 || beam >= res->B)
        return stap_fail(err, STAP_EINVAL, "beam %d outside 0..%d", beam, res->B - 1);
    const int D = res->D;
    double *x = malloc(sizeof(double) * D), *yo = malloc(sizeof(double) * D);
    double *ya = malloc(sizeof(double) * D), *yr = malloc(sizeof(double) * D);
    double *yg = malloc(sizeof(double) * D);
    double scale = res->prf_hz > 0 ? res->prf_hz : 1, ymin = 0;
    int st = x && yo && ya && yr && yg ? sinr_curves(res, beam, scale, x, yo, ya, yg, err)
                                       : stap_fail(err, STAP_ENOMEM, "out of memory");
    if (st) goto out;
    /* a reduced-DOF algorithm: its clairvoyant curve too, and RMB relative to it (for the
     * sub-CPI algorithms the law holds where they adapt: on the staggered snapshots the
     * line is a guide) */
    const int sub = stap_sinr_is_subcpi(res);
    const int reduced = res->Nt != res->N || (stap_sinr_traits(res) & STAP_TRAIT_BEAMSPACE) || sub;
    for (int k = 0; k < D; k++) {
        yr[k] = isfinite(res->rmb_mean) ? yg[k] + db10(res->rmb_mean) : NAN;
        ymin = fmin(ymin, fmin(yo[k], fmin(ya[k], yg[k])));
    }
    char title[160], lab_a[96], lab_r[96], lab_g[96];
    snprintf(title, sizeof title, "SINR loss, beam %d: %s%sN = %d, K = %d, %d segment%s", beam,
             reduced ? res->algorithm : "", reduced ? ", " : "", res->Nt, res->K, res->S,
             res->S == 1 ? "" : "s");
    if (res->S > 1) snprintf(lab_a, sizeof lab_a, "adaptive (mean of %d segments)", res->S);
    else snprintf(lab_a, sizeof lab_a, "adaptive");
    snprintf(lab_r, sizeof lab_r, "%s x %sRMB %.2f dB", reduced ? "clairvoyant" : "optimum",
             sub ? "sub-CPI " : "", db10(res->rmb_mean));
    snprintf(lab_g, sizeof lab_g, "%s, clairvoyant", reduced ? res->algorithm : "");
    plot_series s[4] = {
        {"optimum", D, x, yo, {31, 119, 180}, 0, D <= 64},
        {lab_a, D, x, ya, {230, 100, 20}, 0, D <= 64},
        {lab_r, D, x, yr, {90, 90, 90}, 1, 0},
        {lab_g, D, x, yg, {44, 160, 44}, 0, 0},
    };
    if (reduced) { /* the clairvoyant curve before the RMB line */
        plot_series t = s[2];
        s[2] = s[3];
        s[3] = t;
    }
    /* an exact null (a fixed canceller's, -300 dB) would squash every curve: the axis
     * stops at -120 dB and the lines are clipped at the frame */
    double lo = floor((fmax(ymin, -120) - 3) / 10) * 10;
    plot_lines pl = {title, res->prf_hz > 0 ? "Doppler (Hz)" : "Doppler (cycles/pulse)",
                     "SINR loss (dB)", (isfinite(res->rmb_mean) ? 3 : 2) + reduced, s,
                     -0.5 * scale, 0.5 * scale, lo, 3};
    st = plot_lines_png(path, &pl, mode, err);
out:
    free(x);
    free(yo);
    free(ya);
    free(yr);
    free(yg);
    return st;
}

int stap_plot_sinr_compare(const char *path, const stap_sinr_result *const *res,
                           const int *beams, const char *const *labels,
                           const char *const *optimum_labels, int n, stap_write_mode mode,
                           stap_error *err)
{
    enum { MAX = STAP_PLOT_SINR_MAX_TABLES };
    static const plot_rgb palette[MAX] = {{31, 119, 180}, {230, 100, 20}, {44, 160, 44},
                                          {214, 39, 40},  {148, 103, 189}, {140, 86, 75},
                                          {227, 119, 194}, {90, 90, 90}};
    if (n < 1 || n > MAX)
        return stap_fail(err, STAP_EINVAL, "SINR comparison '%s': %d tables (1 to %d)", path, n, MAX);
    /* Hz when every table knows the same PRF, else cycles per pulse */
    double prf = res[0]->prf_hz;
    for (int k = 0; k < n; k++) {
        if (beams[k] < 0 || beams[k] >= res[k]->B)
            return stap_fail(err, STAP_EINVAL, "SINR table %d: beam %d outside 0..%d", k, beams[k],
                             res[k]->B - 1);
        if (!(res[k]->prf_hz > 0) || fabs(res[k]->prf_hz - prf) > 1e-9 * prf) prf = 0;
    }
    const double scale = prf > 0 ? prf : 1;
    double *buf[3 * MAX] = {0};
    char optlab[MAX][96];
    plot_series s[2 * MAX];
    int ns = 0, st = STAP_OK;
    double ymin = 0;
    for (int k = 0; k < n && !st; k++) {
        const int D = res[k]->D;
        double *x = buf[3 * k] = malloc(sizeof(double) * D);
        double *yo = buf[3 * k + 1] = malloc(sizeof(double) * D);
        double *ya = buf[3 * k + 2] = malloc(sizeof(double) * D);
        st = x && yo && ya ? sinr_curves(res[k], beams[k], scale, x, yo, ya, NULL, err)
                           : stap_fail(err, STAP_ENOMEM, "out of memory");
        if (st) break;
        for (int i = 0; i < D; i++) ymin = fmin(ymin, fmin(yo[i], ya[i]));
        /* the optimum of a table with the same degrees of freedom and bins as an earlier
         * one is the same curve (it depends on the scene, D, Q, window and beam only):
         * drawn once */
        int same = -1;
        for (int j = 0; j < k && same < 0; j++) {
            if (res[j]->D != D) continue;
            double dmax = 0;
            for (int i = 0; i < D; i++) dmax = fmax(dmax, fabs(buf[3 * j + 1][i] - yo[i]));
            if (dmax < 1e-6) same = j;
        }
        s[ns++] = (plot_series){labels[k], D, x, ya, palette[k], 0, D <= 64};
        if (same < 0) {
            if (optimum_labels && optimum_labels[k])
                snprintf(optlab[k], sizeof optlab[k], "%s", optimum_labels[k]);
            else
                snprintf(optlab[k], sizeof optlab[k], "optimum %s", labels[k]);
            s[ns++] = (plot_series){optlab[k], D, x, yo, palette[k], 1, 0};
        }
    }
    if (!st) {
        char title[160];
        snprintf(title, sizeof title, "SINR loss against Doppler: adaptive (solid), optimum "
                 "(dashed), beam %d", beams[0]);
        plot_lines pl = {title, prf > 0 ? "Doppler (Hz)" : "Doppler (cycles/pulse)",
                         "SINR loss (dB)", ns, s, -0.5 * scale, 0.5 * scale,
                         floor((fmax(ymin, -120) - 3) / 10) * 10, 3}; /* as above */
        st = plot_lines_png(path, &pl, mode, err);
    }
    for (int i = 0; i < 3 * MAX; i++) free(buf[i]);
    return st;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int stap_plot_range_doppler(const char *path, const stap_cf32 *y, int B, int D, int R, int beam,
                            const stap_detection *det, size_t ndet, double prf_hz,
                            stap_write_mode mode, stap_error *err)
{
    if (beam < 0 || beam >= B)
        return stap_fail(err, STAP_EINVAL, "beam %d outside 0..%d", beam, B - 1);
    const size_t n = (size_t)D * R;
    double *z = malloc(sizeof(double) * n), *tmp = malloc(sizeof(double) * n);
    plot_marker *mk = malloc(sizeof(plot_marker) * (ndet ? ndet : 1));
    if (!z || !tmp || !mk) {
        free(z);
        free(tmp);
        free(mk);
        return stap_fail(err, STAP_ENOMEM, "out of memory for the range-Doppler map");
    }
    const stap_cf32 *yb = y + (size_t)beam * n;
    double zmax = -INFINITY;
    /* rows bottom-up by Doppler: row j holds bin (j + ceil(D/2)) mod D; each row is
     * shown over its own median (the output noise level differs from bin to bin) */
    const int first = (D + 1) / 2;
    for (int j = 0; j < D; j++) {
        int d = (j + first) % D;
        for (int r = 0; r < R; r++) {
            stap_cf32 v = yb[(size_t)d * R + r];
            tmp[r] = (double)crealf(v) * crealf(v) + (double)cimagf(v) * cimagf(v);
        }
        qsort(tmp, R, sizeof(double), cmp_double);
        double med = tmp[R / 2] > 0 ? tmp[R / 2] : 1;
        for (int r = 0; r < R; r++) {
            stap_cf32 v = yb[(size_t)d * R + r];
            double p = (double)crealf(v) * crealf(v) + (double)cimagf(v) * cimagf(v);
            z[(size_t)j * R + r] = db10(p / med);
            if (z[(size_t)j * R + r] > zmax) zmax = z[(size_t)j * R + r];
        }
    }
    double scale = prf_hz > 0 ? prf_hz : 1;
    double f0 = (double)((first) % D) / D;
    if (f0 >= 0.5) f0 -= 1;
    double y0 = (f0 - 0.5 / D) * scale, y1 = y0 + scale;
    size_t nm = 0;
    for (size_t k = 0; k < ndet; k++) {
        if (det[k].beam != beam) continue;
        double f = (double)det[k].doppler_bin / D;
        if (f >= 0.5) f -= 1;
        mk[nm++] = (plot_marker){det[k].range_cell + 0.5, f * scale};
    }
    char title[160];
    snprintf(title, sizeof title, "Range-Doppler output, beam %d: %zu detection%s", beam, nm,
             nm == 1 ? "" : "s");
    plot_heatmap hm = {title, "range cell", prf_hz > 0 ? "Doppler (Hz)" : "Doppler (cycles/pulse)",
                       "|y|^2 over the bin's median (dB)", R, D, z, 0, R, y0, y1, -10,
                       fmax(20, ceil(zmax / 5) * 5), mk, nm, NULL, 0, NULL, 0, NULL};
    int st = plot_heatmap_png(path, &hm, mode, err);
    free(z);
    free(tmp);
    free(mk);
    return st;
}
