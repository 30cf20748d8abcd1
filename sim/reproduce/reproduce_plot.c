/* `vmxsim reproduce --plots`: an experiment's table as a chart, drawn by
** gnuplot with scripts/plot/bars.gp from data files written beside it
** (reproduce.h: xp_plot). */
#include "reproduce.h"
#include "sim/base/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- charts: scripts/plot/bars.gp draws them ---- */

/* A gnuplot string literal: double-quoted, with \\, \" and \n escaped. */
static void gp_string(FILE *f, const char *name, const char *value) {
  fprintf(f, "%s = \"", name);
  for (const char *p = value; *p; p++) {
    if (*p == '\n') fputs("\\n", f);
    else if (*p == '"' || *p == '\\') fprintf(f, "\\%c", *p);
    else fputc(*p, f);
  }
  fprintf(f, "\"\n");
}

/* The y axis label: the unit, with "microseconds" as µs and, for a unit that
** is only "per ...", the plotted column's own unit in front (µs, exits, cycles);
** a column of percentages ("reduction %") is a share of the unit. */
static void axis_label(const struct xp_table *t, unsigned col, char *buf, size_t n) {
  const char *unit = t->unit, *name = t->cols[col];
  const char *micro = strstr(unit, "microseconds");
  if (strchr(name, '%')) snprintf(buf, n, "%% of the %s", unit);
  else if (micro) snprintf(buf, n, "%.*sµs%s", (int)(micro - unit), unit, micro + strlen("microseconds"));
  else if (strncmp(unit, "per ", 4)) snprintf(buf, n, "%s", unit);
  else snprintf(buf, n, "%s %s", !strcmp(name, "us") ? "µs" : strstr(name, "exits") ? "exits"
                                   : strstr(name, "cycles") ? "cycles" : name, unit);
}

/* A row label as a tick label: lines of at most 24 characters, broken at
** blanks ("|" marks a break, bars.gp turns it into a newline). */
static void tick_label(const char *label, char *buf, size_t n) {
  size_t len = 0, line = 0;
  for (const char *p = label; *p && len + 1 < n; p++) {
    if (*p == ' ' && line && line + 1 + strcspn(p + 1, " ") > 24) { buf[len++] = '|'; line = 0; continue; }
    buf[len++] = *p == '|' || *p == '\t' ? ' ' : *p;
    line++;
  }
  buf[len] = 0;
}

struct chart_range { double ymin, ymax, ypos; bool logy; };

/* The plotted values' range; a logarithmic axis when the positive values span
** more than a factor of 100 (and none is negative), the rule of every vmxsim
** chart: small values stay readable beside large ones, and a linear axis
** otherwise keeps lengths comparable.  bars.gp draws dots on a log axis. */
static struct chart_range chart_range(const struct xp_table *t, unsigned first, unsigned n) {
  struct chart_range r = { 0, 0, 0, false };
  bool negative = false;
  for (unsigned row = 0; row < t->nrows; row++)
    for (unsigned c = first; c < first + n; c++) {
      double v = t->row[row].v[c];
      for (int k = 0; k < 2; k++, v = t->row[row].published[c]) {
        if (k && !t->row[row].calibrated[c]) break;
        if (v > r.ymax) r.ymax = v;
        if (v < r.ymin) r.ymin = v;
        if (v > 0 && (r.ypos == 0 || v < r.ypos)) r.ypos = v;
        negative |= v < 0;
      }
    }
  if (r.ymax <= 0) r.ymax = 1;
  if (r.ypos == 0) r.ypos = r.ymax;
  r.logy = !negative && r.ymax / r.ypos > 100;
  return r;
}

/* Writes NAME.dat (the bars), NAME.marks (the calibration points) and NAME.gp
** (the settings) into dir; returns the number of calibration points or -1. */
static int chart_inputs(const struct xp_table *t, const char *dir, unsigned first, unsigned n) {
  char dat[512], marks[512], gp[512], label[256];
  snprintf(dat, sizeof dat, "%s/%s.dat", dir, t->name);
  snprintf(marks, sizeof marks, "%s/%s.marks", dir, t->name);
  snprintf(gp, sizeof gp, "%s/%s.gp", dir, t->name);
  FILE *d = fopen(dat, "w"), *m = fopen(marks, "w"), *g = fopen(gp, "w");
  int nmarks = -1;
  if (d && m && g) {
    nmarks = 0;
    /* a header line: bars.gp reads every file's first line as column titles */
    fprintf(m, "y\tsimulated\tpublished\n");
    fprintf(d, "label");
    for (unsigned c = first; c < first + n; c++) fprintf(d, "\t%s", t->cols[c]);
    fprintf(d, "\n");
    for (unsigned r = 0; r < t->nrows; r++) {
      char num[NUM_TEXT_MAX], tick[sizeof t->row[r].label];
      tick_label(t->row[r].label, tick, sizeof tick);
      fprintf(d, "%s", tick);
      for (unsigned c = first; c < first + n; c++) {
        fprintf(d, "\t%s", num_shortest(num, t->row[r].v[c]));
        if (!t->row[r].calibrated[c]) continue;
        double y = t->nrows - 1.0 - r + ((n - 1) / 2.0 - (c - first)) * (0.8 / n);   /* as bars.gp's y(i) */
        fprintf(m, "%s\t", num_shortest(num, y));
        fprintf(m, "%s\t", num_shortest(num, t->row[r].v[c]));
        fprintf(m, "%s\n", num_shortest(num, t->row[r].published[c] ? t->row[r].published[c] : t->row[r].v[c]));
        nmarks++;
      }
      fprintf(d, "\n");
    }
    struct chart_range cr = chart_range(t, first, n);
    char num[NUM_TEXT_MAX];
    gp_string(g, "datafile", dat);
    gp_string(g, "markfile", marks);
    fprintf(g, "rows = %u\nn = %u\nmarks = %d\nlogx = %d\n", t->nrows, n, nmarks, cr.logy);
    fprintf(g, "vmin = %s\n", num_shortest(num, cr.ymin));
    fprintf(g, "vmax = %s\n", num_shortest(num, cr.ymax));
    fprintf(g, "vpos = %s\n", num_shortest(num, cr.ypos));
    axis_label(t, first, label, sizeof label);
    gp_string(g, "vlab", label);
  }
  if (d) fclose(d);
  if (m) fclose(m);
  if (g) fclose(g);
  if (nmarks < 0) errorf("%s: %s", dir, strerror(errno));
  return nmarks;
}

/* Writes DIR/NAME.caption.txt: a figure carries no title (a paper puts it in
** the caption), so this file says what the chart shows: the table's title, the
** value axis, what the asterisk and the diamond mark, and the table's notes. */
static void write_caption(const struct xp_table *t, const char *dir, unsigned first, int nmarks) {
  char path[600], label[256];
  snprintf(path, sizeof path, "%s/%s.caption.txt", dir, t->name);
  FILE *f = fopen(path, "w");
  if (!f) { errorf("%s: %s", path, strerror(errno)); return; }
  axis_label(t, first, label, sizeof label);
  unsigned n = t->plot_n ? t->plot_n : (t->ncols < 3 ? t->ncols : 3);
  fprintf(f, "%s (%s).", t->title, label);
  if (chart_range(t, first, n).logy)
    fprintf(f, " Logarithmic axis (the values span more than a factor of 100): a dot per value, not bars.");
  if (nmarks > 0)
    fprintf(f, " * marks a calibration point: a simulated value fitted to a published measurement, drawn as"
               " a diamond beside it.");
  if (t->notes[0]) fprintf(f, " %s", t->notes);
  fprintf(f, "\n");
  if (fclose(f) != 0) errorf("%s: %s", path, strerror(errno));
}

/* Runs gnuplot on the files in args (no shell: any path is safe); 0, or -1
** with the first line of what it printed (or why it did not run) in msg. */
static int run_gnuplot(char *const *args, char *msg, size_t n) {
  int fds[2];
  msg[0] = 0;
  if (pipe(fds) != 0) { snprintf(msg, n, "%s", strerror(errno)); return -1; }
  pid_t pid = fork();
  if (pid == 0) {
    dup2(fds[1], 1);
    dup2(fds[1], 2);
    close(fds[0]);
    close(fds[1]);
    execvp("gnuplot", args);
    fprintf(stderr, "cannot run gnuplot: %s\n", strerror(errno));
    _exit(127);
  }
  close(fds[1]);
  size_t got = 0;
  ssize_t k;
  while (pid > 0 && (k = read(fds[0], msg + got, n - 1 - got)) > 0 && got + 1 < n) got += (size_t)k;
  msg[got] = 0;
  size_t lead = strspn(msg, " \n");                 /* gnuplot starts its messages with a blank line */
  memmove(msg, msg + lead, got - lead + 1);
  msg[strcspn(msg, "\n")] = 0;
  close(fds[0]);
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) < 0) { snprintf(msg, n, "cannot start gnuplot: %s", strerror(errno)); return -1; }
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 && !got ? 0 : -1;
}

/* One chart per table, as DIR/NAME.png, .svg and .pdf: the plotted columns as
** clustered bars (scripts/plot/bars.gp, found by data_file), or dots on a log
** axis; its caption in DIR/NAME.caption.txt. */
void xp_plot(const struct xp_table *t, const char *dir) {
  unsigned first = t->plot_first, n = t->plot_n ? t->plot_n : (t->ncols < 3 ? t->ncols : 3);
  char script[4096], gp[512], fmtgp[512], msg[512];
  if (!data_file("plot/bars.gp", script, sizeof script)) {
    errorf("%s: the chart script plot/bars.gp is not installed (looked in %s; set %s)", t->name, script, DATADIR_ENV);
    return;
  }
  int nmarks = chart_inputs(t, dir, first, n);
  if (nmarks < 0) return;
  write_caption(t, dir, first, nmarks);
  snprintf(gp, sizeof gp, "%s/%s.gp", dir, t->name);
  snprintf(fmtgp, sizeof fmtgp, "%s/%s.fmt.gp", dir, t->name);
  static const char *const formats[] = { "png", "svg", "pdf" };
  for (unsigned f = 0; f < 3; f++) {
    FILE *g = fopen(fmtgp, "w");
    if (!g) { errorf("%s: %s", fmtgp, strerror(errno)); return; }
    char out[600], scripts_dir[4096];
    snprintf(out, sizeof out, "%s/%s.%s", dir, t->name, formats[f]);
    snprintf(scripts_dir, sizeof scripts_dir, "%.*s/", (int)(strrchr(script, '/') - script), script);
    gp_string(g, "dir", scripts_dir);
    gp_string(g, "fmt", formats[f]);
    gp_string(g, "outfile", out);
    fclose(g);
    char *args[] = { "gnuplot", gp, fmtgp, script, NULL };
    if (run_gnuplot(args, msg, sizeof msg) != 0) {
      errorf("%s: gnuplot failed or is not installed (scripts/setup.sh installs it)%s%s", out, msg[0] ? ": " : "", msg);
      return;
    }
  }
  fprintf(stderr, "vmxsim: wrote %s/%s.png, .svg and .pdf (caption: %s.caption.txt)\n", dir, t->name, t->name);
}
