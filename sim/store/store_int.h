/* What the files of sim/store share and nobody else needs. */
#ifndef VMXSIM_STORE_INT_H
#define VMXSIM_STORE_INT_H

#include <sqlite3.h>
#include <stddef.h>

/* Formats "results database PATH: WHAT: sqlite's message (hint)" into err and
** returns EXIT_DB. */
int store_db_error(sqlite3 *db, const char *path, const char *what, char *err, size_t errlen);

#endif
