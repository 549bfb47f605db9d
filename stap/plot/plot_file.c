/* plot_file.c: a picture's file (plot.h) — its temporary, written through cairo's streams
 * with every write error kept, published alone or with the others held (stap_plot_hold). */
#include "plot.h"

#include <cairo.h>
#include <cairo-pdf.h>
#include <cairo-svg.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "h5io.h"

static const char FONT[] = "DejaVu Sans"; /* fontconfig falls back to any sans face */

/* the pictures held by this thread (stap_plot_hold), or NULL: published one by one */
static _Thread_local stap_plot_held *held_now;

/* cairo's write function: all of data to the temporary, or the error kept */
static cairo_status_t plot_stream(void *closure, const unsigned char *data, unsigned int len)
{
    plot_image *im = closure;
    while (!im->write_errno && len) {
        const ssize_t k = write(im->fd, data, len);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) im->write_errno = k < 0 ? errno : EIO;
        else data += k, len -= (unsigned)k;
    }
    return im->write_errno ? CAIRO_STATUS_WRITE_ERROR : CAIRO_STATUS_SUCCESS;
}

int plot_image_create(plot_image *im, const char *path, stap_write_mode mode, int w, int h,
                      plot_rgb bg, stap_error *err)
{
    memset(im, 0, sizeof *im);
    im->w = w;
    im->h = h;
    im->mode = mode;
    im->format = plot_format_of(path);
    snprintf(im->path, sizeof im->path, "%s", path);
    im->fd = -1;
    int st = stap_atomic_begin(path, im->tmp, sizeof im->tmp, mode, err);
    if (st) {
        im->tmp[0] = '\0';
        return st;
    }
    if ((im->fd = open(im->tmp, O_WRONLY | O_TRUNC | O_CLOEXEC)) < 0) {
        const int e = errno;
        plot_image_free(im);
        return stap_fail(err, STAP_EIO, "cannot write '%s': %s", path, strerror(e));
    }
    /* drawn straight onto the file's surface (a recording replayed onto an SVG surface
     * leaks in cairo 1.16); PNG: an image written at the end. Every byte goes through
     * plot_stream, which keeps the first write error (cairo 1.16's PDF stream loses it: a
     * truncated PDF came back as a success) */
    cairo_surface_t *sf = im->format == PLOT_SVG ? cairo_svg_surface_create_for_stream(plot_stream, im, w, h)
                          : im->format == PLOT_PDF
                              ? cairo_pdf_surface_create_for_stream(plot_stream, im, w, h)
                              : cairo_image_surface_create(CAIRO_FORMAT_RGB24, w, h);
    if (im->format == PLOT_PDF)
        cairo_pdf_surface_set_metadata(sf, CAIRO_PDF_METADATA_CREATOR, "rtstap " RTSTAP_VERSION);
    im->surface = sf;
    im->cr = cairo_create(sf);
    if (cairo_status(im->cr) != CAIRO_STATUS_SUCCESS) {
        const char *why = cairo_status_to_string(cairo_status(im->cr));
        plot_image_free(im);
        return stap_fail(err, STAP_ENOMEM, "cannot draw a %d x %d picture '%s': %s", w, h, path, why);
    }
    cairo_set_source_rgb(im->cr, bg.r / 255.0, bg.g / 255.0, bg.b / 255.0);
    cairo_paint(im->cr);
    cairo_select_font_face(im->cr, FONT, CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
    return STAP_OK;
}

void plot_image_free(plot_image *im)
{
    if (!im) return;
    if (im->cr) cairo_destroy(im->cr);
    if (im->surface) {
        cairo_surface_finish(im->surface);
        cairo_surface_destroy(im->surface);
    }
    im->cr = NULL;
    im->surface = NULL;
    if (im->fd >= 0) close(im->fd);
    im->fd = -1;
    if (im->tmp[0]) stap_atomic_abort(im->tmp); /* not written: nothing left */
    im->tmp[0] = '\0';
}

plot_format plot_format_of(const char *path)
{
    const char *dot = strrchr(path, '.');
    if (dot && !strcasecmp(dot, ".svg")) return PLOT_SVG;
    if (dot && !strcasecmp(dot, ".pdf")) return PLOT_PDF;
    return PLOT_PNG;
}

int plot_write(plot_image *im, stap_error *err)
{
    cairo_status_t cs = cairo_status(im->cr);
    cairo_destroy(im->cr);
    im->cr = NULL;
    if (cs == CAIRO_STATUS_SUCCESS && im->format == PLOT_PNG)
        cs = cairo_surface_write_to_png_stream(im->surface, plot_stream, im);
    cairo_surface_finish(im->surface); /* SVG and PDF: written here */
    if (cs == CAIRO_STATUS_SUCCESS) cs = cairo_surface_status(im->surface);
    cairo_surface_destroy(im->surface);
    im->surface = NULL;
    if (close(im->fd) != 0 && !im->write_errno) im->write_errno = errno;
    im->fd = -1;
    if (cs != CAIRO_STATUS_SUCCESS || im->write_errno) {
        stap_atomic_abort(im->tmp);
        im->tmp[0] = '\0';
        return stap_fail(err, STAP_EIO, "cannot write '%s': %s", im->path,
                         im->write_errno ? strerror(im->write_errno) : cairo_status_to_string(cs));
    }
    if (held_now) { /* kept for stap_plot_publish */
        if (held_now->n == STAP_PLOT_HELD_MAX) {
            stap_atomic_abort(im->tmp);
            im->tmp[0] = '\0';
            return stap_fail(err, STAP_EINVAL, "cannot hold '%s': more than %d pictures", im->path,
                             STAP_PLOT_HELD_MAX);
        }
        const int k = held_now->n++;
        snprintf(held_now->item[k].tmp, sizeof held_now->item[k].tmp, "%s", im->tmp);
        snprintf(held_now->item[k].path, sizeof held_now->item[k].path, "%s", im->path);
        held_now->item[k].mode = im->mode;
        im->tmp[0] = '\0';
        return STAP_OK;
    }
    const int st = stap_atomic_commit(im->tmp, im->path, im->mode, err);
    im->tmp[0] = '\0';
    return st;
}

void stap_plot_hold(stap_plot_held *held)
{
    held->n = 0;
    held_now = held;
}

int stap_plot_publish(stap_plot_held *held, stap_error *err)
{
    held_now = NULL;
    int st = STAP_OK;
    for (int k = 0; k < held->n; k++) {
        if (st) stap_atomic_abort(held->item[k].tmp);
        else st = stap_atomic_commit(held->item[k].tmp, held->item[k].path, held->item[k].mode, err);
    }
    held->n = 0;
    return st;
}

void stap_plot_discard(stap_plot_held *held)
{
    held_now = NULL;
    for (int k = 0; k < held->n; k++) stap_atomic_abort(held->item[k].tmp);
    held->n = 0;
}
