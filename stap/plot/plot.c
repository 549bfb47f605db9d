/* plot.c: drawing with cairo (anti-aliased lines and text; PNG, SVG and PDF from one code
 * path; the picture's file: plot_file.c), and the radar pictures. */
#include "plot.h"

#include <cairo.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h5io.h"

static const plot_rgb WHITE = {255, 255, 255}, BLACK = {0, 0, 0}, GRID = {225, 225, 225};
static const plot_rgb INK = {30, 30, 30};

/* ---- drawing ------------------------------------------------------------------------ */
static void source(cairo_t *cr, plot_rgb c) { cairo_set_source_rgb(cr, c.r / 255.0, c.g / 255.0, c.b / 255.0); }

void plot_fill_rect(plot_image *im, double x0, double y0, double x1, double y1, plot_rgb c)
{
    source(im->cr, c);
    cairo_rectangle(im->cr, x0, y0, x1 - x0, y1 - y0);
    cairo_fill(im->cr);
}

/* a line of `width`, dashed with on/off lengths `dash` (0: solid) */
static void line_dash(plot_image *im, double x0, double y0, double x1, double y1, double width,
                      plot_rgb c, double dash)
{
    cairo_t *cr = im->cr;
    cairo_save(cr);
    source(cr, c);
    cairo_set_line_width(cr, width);
    if (dash > 0) cairo_set_dash(cr, &dash, 1, 0);
    cairo_move_to(cr, x0, y0);
    cairo_line_to(cr, x1, y1);
    cairo_stroke(cr);
    cairo_restore(cr);
}

void plot_line(plot_image *im, double x0, double y0, double x1, double y1, double width, plot_rgb c)
{
    line_dash(im, x0, y0, x1, y1, width, c, 0);
}

double plot_text_width(plot_image *im, const char *s, double size)
{
    cairo_text_extents_t te;
    cairo_set_font_size(im->cr, size);
    cairo_text_extents(im->cr, s, &te);
    return te.x_advance;
}

double plot_text(plot_image *im, double x, double y, const char *s, double size, int vertical,
                 plot_rgb c)
{
    cairo_t *cr = im->cr;
    cairo_font_extents_t fe;
    cairo_save(cr);
    cairo_set_font_size(cr, size);
    cairo_font_extents(cr, &fe);
    source(cr, c);
    cairo_move_to(cr, x, y);
    if (vertical) cairo_rotate(cr, -M_PI / 2); /* runs upwards from (x, y), the bottom-left */
    cairo_rel_move_to(cr, 0, vertical ? 0 : fe.ascent);
    if (vertical) cairo_rel_move_to(cr, 0, fe.ascent);
    cairo_show_text(cr, s);
    cairo_restore(cr);
    return plot_text_width(im, s, size);
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

/* ---- axes ------------------------------------------------------------------------- */
static const double TXT = 15; /* text size, pixels */

typedef struct {
    double x0, y0, x1, y1;        /* plot area in pixels                               */
    double dx0, dx1, dy0, dy1;    /* data range                                         */
} frame;

static double fx(const frame *f, double x) { return f->x0 + (x - f->dx0) / (f->dx1 - f->dx0) * (f->x1 - f->x0); }
static double fy(const frame *f, double y) { return f->y1 - (y - f->dy0) / (f->dy1 - f->dy0) * (f->y1 - f->y0); }

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

static void clip_to(plot_image *im, const frame *f)
{
    cairo_rectangle(im->cr, f->x0, f->y0, f->x1 - f->x0, f->y1 - f->y0);
    cairo_clip(im->cr);
}

/* Box, ticks, tick labels, grid (optional), axis labels and title. */
static void draw_axes(plot_image *im, const frame *f, const char *title, const char *xlabel,
                      const char *ylabel, int grid)
{
    double t[64], step;
    char lab[64];
    /* about one x tick per 80 pixels (at most 8): the labels must not touch */
    int tx = (int)(f->x1 - f->x0) / 80;
    int n = nice_ticks(f->dx0, f->dx1, tx < 2 ? 2 : tx > 8 ? 8 : tx, t, 64, &step);
    for (int i = 0; i < n; i++) {
        double x = fx(f, t[i]);
        if (grid) plot_line(im, x, f->y0, x, f->y1, 1, GRID);
        plot_line(im, x, f->y1, x, f->y1 + 6, 1.5, INK);
        tick_label(lab, sizeof lab, t[i], step);
        plot_text(im, x - plot_text_width(im, lab, TXT) / 2, f->y1 + 10, lab, TXT, 0, INK);
    }
    n = nice_ticks(f->dy0, f->dy1, 7, t, 64, &step);
    for (int i = 0; i < n; i++) {
        double y = fy(f, t[i]);
        if (grid) plot_line(im, f->x0, y, f->x1, y, 1, GRID);
        plot_line(im, f->x0 - 6, y, f->x0, y, 1.5, INK);
        tick_label(lab, sizeof lab, t[i], step);
        plot_text(im, f->x0 - 10 - plot_text_width(im, lab, TXT), y - TXT * 0.6, lab, TXT, 0, INK);
    }
    cairo_save(im->cr); /* the box */
    source(im->cr, INK);
    cairo_set_line_width(im->cr, 1.5);
    cairo_rectangle(im->cr, f->x0, f->y0, f->x1 - f->x0, f->y1 - f->y0);
    cairo_stroke(im->cr);
    cairo_restore(im->cr);
    if (xlabel)
        plot_text(im, (f->x0 + f->x1) / 2 - plot_text_width(im, xlabel, TXT) / 2, f->y1 + 36, xlabel,
                  TXT, 0, INK);
    if (ylabel)
        plot_text(im, 14, (f->y0 + f->y1) / 2 + plot_text_width(im, ylabel, TXT) / 2, ylabel, TXT, 1,
                  INK);
    if (title) plot_text(im, f->x0, 14, title, TXT + 2, 0, BLACK);
}

static void ring(plot_image *im, double cx, double cy, double r, double width, plot_rgb c)
{
    cairo_save(im->cr);
    source(im->cr, c);
    cairo_set_line_width(im->cr, width);
    cairo_new_sub_path(im->cr);
    cairo_arc(im->cr, cx, cy, r, 0, 2 * M_PI);
    cairo_stroke(im->cr);
    cairo_restore(im->cr);
}

/* The cells of hm inside frame f (an image of nx x ny cells, scaled without smoothing: each
 * cell a sharp rectangle in PNG, SVG and PDF alike), its guides (dotted) and markers
 * (rings), clipped to the frame; the frame's data range may be a part of the map's. */
static void draw_heatmap(plot_image *im, const frame *f, const plot_heatmap *hm)
{
    const double zr = hm->zmax > hm->zmin ? hm->zmax - hm->zmin : 1;
    cairo_surface_t *cells = cairo_image_surface_create(CAIRO_FORMAT_RGB24, hm->nx, hm->ny);
    if (cairo_surface_status(cells) == CAIRO_STATUS_SUCCESS) {
        cairo_surface_flush(cells);
        unsigned char *px = cairo_image_surface_get_data(cells);
        const int stride = cairo_image_surface_get_stride(cells);
        for (int j = 0; j < hm->ny; j++) { /* image row 0 is the top: the last y row */
            uint32_t *row = (uint32_t *)(px + (size_t)(hm->ny - 1 - j) * stride);
            for (int i = 0; i < hm->nx; i++) {
                const double z = hm->z[(size_t)j * hm->nx + i];
                const plot_rgb c = plot_colormap(isfinite(z) ? (z - hm->zmin) / zr : 0);
                row[i] = (uint32_t)c.r << 16 | (uint32_t)c.g << 8 | c.b;
            }
        }
        cairo_surface_mark_dirty(cells);
        cairo_save(im->cr);
        clip_to(im, f);
        /* the map's data rectangle in pixels */
        const double px0 = fx(f, hm->x0), px1 = fx(f, hm->x1), py0 = fy(f, hm->y1), py1 = fy(f, hm->y0);
        cairo_translate(im->cr, px0, py0);
        cairo_scale(im->cr, (px1 - px0) / hm->nx, (py1 - py0) / hm->ny);
        cairo_set_source_surface(im->cr, cells, 0, 0);
        cairo_pattern_set_filter(cairo_get_source(im->cr), CAIRO_FILTER_NEAREST);
        cairo_paint(im->cr);
        cairo_restore(im->cr);
    }
    cairo_surface_destroy(cells);
    cairo_save(im->cr);
    clip_to(im, f);
    for (size_t k = 0; k < hm->nguides; k++) {
        const plot_guide *g = &hm->guides[k];
        line_dash(im, fx(f, g->x0), fy(f, g->y0), fx(f, g->x1), fy(f, g->y1), 1.2, WHITE, 4);
    }
    for (size_t k = 0; k < hm->nmarkers; k++) {
        const double cx = fx(f, hm->markers[k].x), cy = fy(f, hm->markers[k].y);
        ring(im, cx, cy, 10, 3.5, BLACK);
        ring(im, cx, cy, 10, 1.8, (plot_rgb){255, 60, 60});
    }
    cairo_restore(im->cr);
    /* labelled ticks above the frame */
    for (size_t k = 0; k < hm->nxmarks; k++) {
        const double x = fx(f, hm->xmarks[k]);
        if (x < f->x0 || x > f->x1) continue;
        cairo_move_to(im->cr, x - 5, f->y0 - 13);
        cairo_line_to(im->cr, x + 5, f->y0 - 13);
        cairo_line_to(im->cr, x, f->y0 - 4);
        cairo_close_path(im->cr);
        source(im->cr, INK);
        cairo_fill(im->cr);
        if (hm->xmark_label)
            plot_text(im, x - plot_text_width(im, hm->xmark_label, TXT) / 2, f->y0 - 32,
                      hm->xmark_label, TXT, 0, INK);
    }
}

/* A vertical colour bar in cb (its data range zmin..zmax), ticks, and label at x_label. */
static void draw_colorbar(plot_image *im, const frame *cb, const char *label, double x_label)
{
    cairo_pattern_t *g = cairo_pattern_create_linear(0, cb->y1, 0, cb->y0);
    for (int k = 0; k <= 16; k++) {
        const plot_rgb c = plot_colormap(k / 16.0);
        cairo_pattern_add_color_stop_rgb(g, k / 16.0, c.r / 255.0, c.g / 255.0, c.b / 255.0);
    }
    cairo_rectangle(im->cr, cb->x0, cb->y0, cb->x1 - cb->x0, cb->y1 - cb->y0);
    cairo_set_source(im->cr, g);
    cairo_fill_preserve(im->cr);
    cairo_pattern_destroy(g);
    source(im->cr, INK);
    cairo_set_line_width(im->cr, 1);
    cairo_stroke(im->cr);
    double t[64], step;
    char lab[64];
    int n = nice_ticks(cb->dy0, cb->dy1, 8, t, 64, &step);
    for (int i = 0; i < n; i++) {
        const double y = fy(cb, t[i]);
        plot_line(im, cb->x1, y, cb->x1 + 6, y, 1.5, INK);
        tick_label(lab, sizeof lab, t[i], step);
        plot_text(im, cb->x1 + 10, y - TXT * 0.6, lab, TXT, 0, INK);
    }
    if (label)
        plot_text(im, x_label, (cb->y0 + cb->y1) / 2 + plot_text_width(im, label, TXT) / 2, label,
                  TXT, 1, INK);
}

static int heatmap_ok(const char *path, const plot_heatmap *hm, stap_error *err)
{
    if (hm->nx < 1 || hm->ny < 1 || !(hm->x1 > hm->x0) || !(hm->y1 > hm->y0))
        return stap_fail(err, STAP_EINVAL, "heat map '%s': empty grid or range", path);
    if (hm->nx > 32767 || hm->ny > 32767) /* cairo's largest image: drawn cell for cell */
        return stap_fail(err, STAP_EINVAL, "heat map '%s': %d x %d cells; at most 32767 a side", path,
                         hm->nx, hm->ny);
    return STAP_OK;
}

/* the part of the data range a view shows (view NULL or a limit unset: all of it) */
static void view_range(const stap_plot_view *v, int axis, double *lo, double *hi)
{
    if (!v) return;
    const double *lim = axis ? v->ylim : v->xlim;
    if (lim[1] > lim[0]) {
        *lo = lim[0];
        *hi = lim[1];
    }
}

int plot_heatmap_file(const char *path, const plot_heatmap *hm, const stap_plot_view *view,
                      stap_write_mode mode, stap_error *err)
{
    int st = heatmap_ok(path, hm, err);
    if (st) return st;
    plot_image im;
    if ((st = plot_image_create(&im, path, mode, 980, 660, WHITE, err))) return st;
    frame f = {110, 60, 780, 570, hm->x0, hm->x1, hm->y0, hm->y1};
    view_range(view, 0, &f.dx0, &f.dx1);
    view_range(view, 1, &f.dy0, &f.dy1);
    draw_heatmap(&im, &f, hm);
    draw_axes(&im, &f, hm->title, hm->xlabel, hm->ylabel, 0);
    frame cb = {f.x1 + 40, f.y0, f.x1 + 70, f.y1, 0, 1, hm->zmin, hm->zmax};
    draw_colorbar(&im, &cb, hm->cbar_label, im.w - 34);
    st = plot_write(&im, err);
    plot_image_free(&im);
    return st;
}

int plot_heatmaps_file(const char *path, const char *title, const char *note,
                       const plot_heatmap *hm, int n, const stap_plot_view *view,
                       stap_write_mode mode, stap_error *err)
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
    if ((st = plot_image_create(&im, path, mode, cbx + 150, note ? 690 : 660, WHITE, err))) return st;
    if (title) plot_text(&im, x0, 10, title, TXT + 2, 0, BLACK);
    if (note) plot_text(&im, x0, 658, note, TXT, 0, INK);
    for (int k = 0; k < n; k++) {
        frame f = {x0 + k * (pw + gap), y0, x0 + k * (pw + gap) + pw, y1,
                   hm[k].x0, hm[k].x1, hm[k].y0, hm[k].y1};
        view_range(view, 0, &f.dx0, &f.dx1);
        view_range(view, 1, &f.dy0, &f.dy1);
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
            plot_text(&im, f.x0, 40, line, TXT, 0, BLACK);
            if (nl) plot_text(&im, f.x0, 62, nl + 1, TXT, 0, INK);
        }
    }
    frame cb = {cbx, y0, cbx + 30, y1, 0, 1, hm[0].zmin, hm[0].zmax};
    draw_colorbar(&im, &cb, hm[0].cbar_label, im.w - 34);
    st = plot_write(&im, err);
    plot_image_free(&im);
    return st;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* a series' median of its finite values (NAN: none) */
static double series_median(const plot_series *se)
{
    double *v = malloc(sizeof(double) * (se->n > 0 ? se->n : 1)), m = NAN;
    int k = 0;
    for (int i = 0; v && i < se->n; i++)
        if (isfinite(se->y[i])) v[k++] = se->y[i];
    if (k) {
        qsort(v, k, sizeof(double), cmp_double);
        m = v[k / 2];
    }
    free(v);
    return m;
}

int plot_lines_file(const char *path, const plot_lines *pl, const stap_plot_view *view,
                    stap_write_mode mode, stap_error *err)
{
    if (!(pl->x1 > pl->x0) || !(pl->y1 > pl->y0))
        return stap_fail(err, STAP_EINVAL, "line plot '%s': empty range", path);
    plot_image im;
    const int W = 980, row_h = 24;
    int st = plot_image_create(&im, path, mode, W, 640, WHITE, err);
    if (st) return st;
    /* the y range (auto_floor): down to 30 dB under the lowest curve's median — the level
     * of each curve away from its notch is what is compared, and a notch's depth (a clutter
     * null, a fixed canceller's -300 dB) runs off the bottom, clipped — counting only the
     * curves within 40 dB of the highest (a curve far below is drawn clipped, its legend
     * saying so); --ylim sets it outright */
    double y0 = pl->y0, top = -INFINITY, *med = malloc(sizeof(double) * (pl->nseries + 1));
    for (int s = 0; med && s < pl->nseries; s++) {
        med[s] = series_median(&pl->series[s]);
        if (med[s] > top) top = med[s];
    }
    if (med && isfinite(top) && pl->auto_floor) {
        double lo = INFINITY, low_med = top;
        for (int s = 0; s < pl->nseries; s++) {
            if (!(med[s] >= top - 40)) continue;
            low_med = fmin(low_med, med[s]);
            for (int i = 0; i < pl->series[s].n; i++)
                if (isfinite(pl->series[s].y[i])) lo = fmin(lo, pl->series[s].y[i]);
        }
        if (isfinite(lo)) y0 = fmax(y0, floor((fmax(lo, low_med - 30) - 3) / 5) * 5);
    }
    /* the legend: rows of entries above the plot area, as many rows as it needs */
    char (*labels)[128] = malloc(sizeof *labels * (pl->nseries + 1));
    int rows = 1;
    for (int s = 0, lx = 110; labels && s < pl->nseries; s++) {
        snprintf(labels[s], sizeof labels[s], "%s%s", pl->series[s].label,
                 med && med[s] < y0 && !(view && view->ylim[1] > view->ylim[0]) ? " (below the axis)" : "");
        int w = 44 + (int)plot_text_width(&im, labels[s], TXT) + 30;
        if (lx > 110 && lx + w - 30 > W - 20) {
            rows++;
            lx = 110;
        }
        lx += w;
    }
    const int extra = (rows - 1) * row_h;
    if (extra) { /* taller: start again on a surface of the right size */
        plot_image_free(&im);
        if ((st = plot_image_create(&im, path, mode, W, 640 + extra, WHITE, err))) {
            free(med);
            free(labels);
            return st;
        }
    }
    frame f = {110, 100 + extra, 950, 550 + extra, pl->x0, pl->x1, y0, pl->y1};
    view_range(view, 0, &f.dx0, &f.dx1);
    view_range(view, 1, &f.dy0, &f.dy1);
    draw_axes(&im, &f, pl->title, pl->xlabel, pl->ylabel, 1);
    double lx = f.x0, ly = 68;
    for (int s = 0; s < pl->nseries; s++) {
        const plot_series *se = &pl->series[s];
        cairo_t *cr = im.cr;
        cairo_save(cr);
        clip_to(&im, &f);
        source(cr, se->color);
        cairo_set_line_width(cr, 2.5);
        cairo_set_line_join(cr, CAIRO_LINE_JOIN_ROUND);
        const double dash = 9;
        if (se->dashed) cairo_set_dash(cr, &dash, 1, 0);
        int pen = 0; /* a path runs over finite points; a gap breaks it */
        for (int i = 0; i < se->n; i++) {
            if (!isfinite(se->y[i])) {
                pen = 0;
                continue;
            }
            if (pen) cairo_line_to(cr, fx(&f, se->x[i]), fy(&f, se->y[i]));
            else cairo_move_to(cr, fx(&f, se->x[i]), fy(&f, se->y[i]));
            pen = 1;
        }
        cairo_stroke(cr);
        cairo_set_dash(cr, NULL, 0, 0);
        for (int i = 0; se->points && i < se->n; i++)
            if (isfinite(se->y[i])) {
                cairo_arc(cr, fx(&f, se->x[i]), fy(&f, se->y[i]), 3.2, 0, 2 * M_PI);
                cairo_fill(cr);
            }
        cairo_restore(cr);
        /* legend entry */
        const char *lab = labels ? labels[s] : se->label;
        double w = 44 + plot_text_width(&im, lab, TXT) + 30;
        if (lx > f.x0 && lx + w - 30 > W - 20) {
            lx = f.x0;
            ly += row_h;
        }
        line_dash(&im, lx, ly, lx + 36, ly, 2.5, se->color, se->dashed ? 9 : 0);
        plot_text(&im, lx + 44, ly - TXT * 0.6, lab, TXT, 0, INK);
        lx += w;
    }
    free(med);
    free(labels);
    st = plot_write(&im, err);
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
                            const stap_plot_view *view, stap_write_mode mode, stap_error *err)
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
    st = plot_heatmap_file(path, &hm, view, mode, err);
out:
    free(wc);
    free(wp);
    free(tw_p);
    free(tw_c);
    free(T);
    free(S);
    return st;
}

int stap_plot_response(const char *path, const stap_response_picture *pic,
                       const stap_plot_view *view, stap_write_mode mode, stap_error *err)
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
    int st = plot_heatmaps_file(path, pic->title, note, hm, np, view, mode, err);
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

int stap_plot_sinr(const char *path, const stap_sinr_result *res, int beam, const char *beam_note,
                   const stap_plot_view *view, stap_write_mode mode, stap_error *err)
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
    char title[224], lab_a[96], lab_r[96], lab_g[96];
    snprintf(title, sizeof title, "SINR loss, beam %d%s%s%s: %s%sN = %d, K = %d, %d segment%s", beam,
             beam_note ? " (" : "", beam_note ? beam_note : "", beam_note ? ")" : "",
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
                     -0.5 * scale, 0.5 * scale, lo, 3, 1};
    st = plot_lines_file(path, &pl, view, mode, err);
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
                           const char *const *optimum_labels, int n,
                           const stap_plot_view *view, stap_write_mode mode, stap_error *err)
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
                         floor((fmax(ymin, -120) - 3) / 10) * 10, 3, 1}; /* as above */
        st = plot_lines_file(path, &pl, view, mode, err);
    }
    for (int i = 0; i < 3 * MAX; i++) free(buf[i]);
    return st;
}

int stap_plot_range_doppler(const char *path, const stap_cf32 *y, int B, int D, int R, int beam,
                            const stap_detection *det, size_t ndet, double prf_hz,
                            const double *range_m, const char *title_note,
                            const stap_plot_view *view, stap_write_mode mode, stap_error *err)
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
    /* the range axis: cells, or the file's ranges in km (cell r at range_m[r]) */
    const int metres = range_m && R > 1 && range_m[R - 1] != range_m[0];
    const double km0 = metres ? range_m[0] / 1e3 : 0, dkm = metres ? (range_m[R - 1] - range_m[0]) / 1e3 / (R - 1) : 1;
    const double x0 = metres ? km0 - dkm / 2 : 0, x1 = metres ? km0 + dkm * (R - 0.5) : R;
    size_t nm = 0;
    for (size_t k = 0; k < ndet; k++) {
        if (det[k].beam != beam) continue;
        double f = (double)det[k].doppler_bin / D;
        if (f >= 0.5) f -= 1;
        mk[nm++] = (plot_marker){metres ? km0 + dkm * det[k].range_cell : det[k].range_cell + 0.5, f * scale};
    }
    char title[200];
    snprintf(title, sizeof title, "Range-Doppler output, beam %d%s%s: %zu detection%s", beam,
             title_note ? ", " : "", title_note ? title_note : "", nm, nm == 1 ? "" : "s");
    plot_heatmap hm = {title, metres ? "range (km)" : "range cell",
                       prf_hz > 0 ? "Doppler (Hz)" : "Doppler (cycles/pulse)",
                       "|y|^2 over the bin's median (dB)", R, D, z, x0, x1, y0, y1, -10,
                       fmax(20, ceil(zmax / 5) * 5), mk, nm, NULL, 0, NULL, 0, NULL};
    int st = plot_heatmap_file(path, &hm, view, mode, err);
    free(z);
    free(tmp);
    free(mk);
    return st;
}
