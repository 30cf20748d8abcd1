/* Plain-text tables: cells are collected first, then printed with each column as wide as its widest cell. */
#ifndef VMXSIM_TEXTTABLE_H
#define VMXSIM_TEXTTABLE_H

#include <stdio.h>

struct texttable {
  unsigned ncols, nrows, cap;
  char **cell;                 /* nrows x ncols, row-major; NULL prints as empty */
  unsigned col;                /* next column of the last row */
};

void tt_init(struct texttable *t, unsigned ncols);
void tt_free(struct texttable *t);
/* Appends a cell to the current row (starting a new row after ncols cells). */
void tt_cell(struct texttable *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Ends the current row early, leaving its remaining cells empty (an empty row when none were added). */
void tt_endrow(struct texttable *t);
/* Prints every row: align[c] is 'l' or 'r' per column; columns are separated by gap spaces;
** trailing spaces are trimmed. */
void tt_print(FILE *f, const struct texttable *t, const char *align, unsigned gap);

#endif
