/* A SQLite VFS over the default one whose writes and syncs fail on demand:
** storage faults (a disk I/O error, a full disk) for the store's tests.
** faulty_vfs_install() makes it the default VFS; faulty_vfs_fail(code, after)
** makes every write after the next `after` ones fail with code (SQLITE_IOERR_WRITE,
** SQLITE_FULL); faulty_vfs_fail(0, 0) heals it. */
#ifndef VMXSIM_FAULTY_VFS_H
#define VMXSIM_FAULTY_VFS_H

#include <sqlite3.h>
#include <string.h>

static sqlite3_vfs *fv_real, fv_vfs;
static int fv_code, fv_after;

struct fv_file { sqlite3_file base; sqlite3_file *real; };
#define FV_REAL(f) (((struct fv_file *)(f))->real)

static int fv_fault(void) {
  if (!fv_code) return SQLITE_OK;
  if (fv_after > 0) { fv_after--; return SQLITE_OK; }
  return fv_code;
}
static int fv_close(sqlite3_file *f) {
  int rc = FV_REAL(f)->pMethods ? FV_REAL(f)->pMethods->xClose(FV_REAL(f)) : SQLITE_OK;
  return rc;
}
static int fv_read(sqlite3_file *f, void *b, int n, sqlite3_int64 o) { return FV_REAL(f)->pMethods->xRead(FV_REAL(f), b, n, o); }
static int fv_write(sqlite3_file *f, const void *b, int n, sqlite3_int64 o) {
  int rc = fv_fault();
  return rc ? rc : FV_REAL(f)->pMethods->xWrite(FV_REAL(f), b, n, o);
}
static int fv_truncate(sqlite3_file *f, sqlite3_int64 n) { return FV_REAL(f)->pMethods->xTruncate(FV_REAL(f), n); }
static int fv_sync(sqlite3_file *f, int fl) {
  int rc = fv_fault();
  return rc ? (rc == SQLITE_FULL ? rc : SQLITE_IOERR_FSYNC) : FV_REAL(f)->pMethods->xSync(FV_REAL(f), fl);
}
static int fv_size(sqlite3_file *f, sqlite3_int64 *n) { return FV_REAL(f)->pMethods->xFileSize(FV_REAL(f), n); }
static int fv_lock(sqlite3_file *f, int l) { return FV_REAL(f)->pMethods->xLock(FV_REAL(f), l); }
static int fv_unlock(sqlite3_file *f, int l) { return FV_REAL(f)->pMethods->xUnlock(FV_REAL(f), l); }
static int fv_reserved(sqlite3_file *f, int *r) { return FV_REAL(f)->pMethods->xCheckReservedLock(FV_REAL(f), r); }
static int fv_fcntl(sqlite3_file *f, int op, void *a) { return FV_REAL(f)->pMethods->xFileControl(FV_REAL(f), op, a); }
static int fv_sector(sqlite3_file *f) { return FV_REAL(f)->pMethods->xSectorSize(FV_REAL(f)); }
static int fv_dev(sqlite3_file *f) { return FV_REAL(f)->pMethods->xDeviceCharacteristics(FV_REAL(f)); }
static int fv_shm_map(sqlite3_file *f, int i, int sz, int ext, void volatile **p) {
  return FV_REAL(f)->pMethods->xShmMap(FV_REAL(f), i, sz, ext, p);
}
static int fv_shm_lock(sqlite3_file *f, int o, int n, int fl) { return FV_REAL(f)->pMethods->xShmLock(FV_REAL(f), o, n, fl); }
static void fv_shm_barrier(sqlite3_file *f) { FV_REAL(f)->pMethods->xShmBarrier(FV_REAL(f)); }
static int fv_shm_unmap(sqlite3_file *f, int del) { return FV_REAL(f)->pMethods->xShmUnmap(FV_REAL(f), del); }

/* Version 2 (no memory-mapped fetch): every page goes through fv_read / fv_write. */
static const sqlite3_io_methods fv_methods = {
  2, fv_close, fv_read, fv_write, fv_truncate, fv_sync, fv_size, fv_lock, fv_unlock, fv_reserved,
  fv_fcntl, fv_sector, fv_dev, fv_shm_map, fv_shm_lock, fv_shm_barrier, fv_shm_unmap, NULL, NULL,
};

static int fv_open(sqlite3_vfs *v, const char *name, sqlite3_file *f, int flags, int *out) {
  (void)v;
  struct fv_file *ff = (struct fv_file *)f;
  ff->real = (sqlite3_file *)(ff + 1);
  memset(ff->real, 0, (size_t)fv_real->szOsFile);
  int rc = fv_real->xOpen(fv_real, name, ff->real, flags, out);
  f->pMethods = rc == SQLITE_OK ? &fv_methods : NULL;
  return rc;
}

static void faulty_vfs_install(void) {
  if (fv_real) return;
  fv_real = sqlite3_vfs_find(NULL);
  fv_vfs = *fv_real;
  fv_vfs.zName = "faulty";
  fv_vfs.szOsFile = (int)sizeof(struct fv_file) + fv_real->szOsFile;
  fv_vfs.xOpen = fv_open;
  sqlite3_vfs_register(&fv_vfs, 1);
}

static void faulty_vfs_fail(int code, int after) {
  fv_code = code;
  fv_after = after;
}

#endif
