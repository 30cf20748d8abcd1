/* Touch sets: the guest kernel's memory a Linux code path of the era touches,
** as groups of 4 KB pages.  Under shadow paging each distinct 4 KB page a
** pass touches costs one hidden fault after the shadow tables were dropped
** (KVM of 2007 installs one 4 KB shadow entry per fault, also for the 4 MB
** pages of the kernel's direct map), so what matters is how many distinct
** pages a pass touches, which of them are per task or per pipe, and which are
** shared.  workloads/README.md ("Touch sets") gives each group's code path in
** Linux 2.6.18 (the kernel of Fedora Core 6) and says which counts are
** estimates.
**
** Placement: kernel text lies in the kernel image (contiguous, one range per
** group); each data group has its own region of the direct map, one slot per
** instance (task, pipe or socket), because objects of one kind come from one
** slab cache or one run of buddy pages.  So the shadow MMU sees one shared
** kernel shadow page table per group and per 2 MB of its instances.
*/
#ifndef VMXSIM_KPAGES_H
#define VMXSIM_KPAGES_H

#include <stdbool.h>
#include <stdint.h>
#include "genutil.h"

enum kscope {
  KS_TEXT,       /* kernel text: one copy */
  KS_GLOBAL,     /* kernel data of which there is one copy (per CPU: one vCPU's) */
  KS_TASK,       /* per task */
  KS_PIPE,       /* per pipe */
  KS_SOCKET,     /* per UNIX socket pair */
};

/* X(ENUM, pages, scope, what) -- counts from workloads/README.md's table. */
#define KGROUPS(X)                                                                                  \
  X(ENTRY_TEXT,  2, KS_TEXT,   "system-call entry and exit, sysenter path (entry.S)")               \
  X(AUDIT_TEXT,  2, KS_TEXT,   "syscall audit hooks (auditsc.c, ptrace.c do_syscall_trace)")        \
  X(VFS_TEXT,    2, KS_TEXT,   "sys_read/sys_write, vfs_read/vfs_write, fget_light")                \
  X(LSM_TEXT,    2, KS_TEXT,   "SELinux file permission checks and the AVC")                       \
  X(NOTIFY_TEXT, 1, KS_TEXT,   "dnotify/inotify events of reads and writes")                        \
  X(PIPE_TEXT,   2, KS_TEXT,   "fs/pipe.c readv, writev, pipe_wait, buffer ops")                    \
  X(COPY_TEXT,   2, KS_TEXT,   "kmap_atomic, copy to and from user space")                          \
  X(LOCK_TEXT,   1, KS_TEXT,   "mutex_lock/unlock of the inode")                                    \
  X(TIME_TEXT,   2, KS_TEXT,   "touch_atime, file_update_time, current_fs_time, mark_inode_dirty")  \
  X(WAKE_TEXT,   3, KS_TEXT,   "__wake_up_sync, try_to_wake_up, enqueue, wait queues")              \
  X(SCHED_TEXT,  2, KS_TEXT,   "schedule, context_switch (switch_mm), finish_task_switch")          \
  X(SWITCH_TEXT, 1, KS_TEXT,   "__switch_to: TSS esp0, TLS, segments")                              \
  X(SOCK_TEXT,   8, KS_TEXT,   "socket.c, af_unix.c send/recv, skbuff, sock.c, iovec, slab")        \
  X(GETPPID_TEXT, 1, KS_TEXT,  "sys_getppid")                                                       \
  X(RUNQUEUE,    1, KS_GLOBAL, "the CPU's runqueue")                                                \
  X(PERCPU,      2, KS_GLOBAL, "per-CPU TSS (sysenter stack) and GDT")                              \
  X(GLOBALS,     2, KS_GLOBAL, "sys_call_table, jiffies/xtime, SELinux AVC and audit globals")      \
  X(KSTACK,      1, KS_TASK,   "kernel stack and thread_info (4 KB stacks)")                        \
  X(TASK,        1, KS_TASK,   "task_struct")                                                       \
  X(MM,          1, KS_TASK,   "mm_struct (switch_mm)")                                             \
  X(FILES,       1, KS_TASK,   "files_struct and fdtable (fget_light)")                             \
  X(AUDIT_CTX,   1, KS_TASK,   "the task's audit_context")                                          \
  X(TASK_SEC,    1, KS_TASK,   "SELinux task_security_struct")                                      \
  X(PIPE_FILE,   1, KS_PIPE,   "struct file of both ends")                                          \
  X(PIPE_INODE,  1, KS_PIPE,   "pipefs dentry and inode")                                           \
  X(PIPE_INFO,   1, KS_PIPE,   "pipe_inode_info: buffers and wait queue")                           \
  X(PIPE_PAGE,   1, KS_PIPE,   "the pipe's data page")                                              \
  X(PIPE_SEC,    1, KS_PIPE,   "SELinux file and inode security")                                   \
  X(SOCK,        1, KS_SOCKET, "the two unix_sock structures")                                      \
  X(SOCK_INODE,  1, KS_SOCKET, "socket inode and struct file")                                      \
  X(SKB,         2, KS_SOCKET, "skb heads and data (slab pages)")                                   \
  X(SOCK_SEC,    1, KS_SOCKET, "SELinux socket and file security")

enum kgroup {
#define X(e, n, s, d) KG_##e,
  KGROUPS(X)
#undef X
  KG_COUNT
};

#define KG(e) (1ull << KG_##e)

/* Code paths as sets of groups (touched in group order). */
#define KP_SYSCALL      (KG(ENTRY_TEXT) | KG(AUDIT_TEXT) | KG(PERCPU) | KG(GLOBALS) | KG(KSTACK) | KG(TASK) | KG(AUDIT_CTX))
#define KP_FILE_IO      (KG(VFS_TEXT) | KG(LSM_TEXT) | KG(NOTIFY_TEXT) | KG(COPY_TEXT) | KG(TIME_TEXT) | KG(FILES) | KG(TASK_SEC))
#define KP_PIPE         (KG(PIPE_TEXT) | KG(LOCK_TEXT) | KG(PIPE_FILE) | KG(PIPE_INODE) | KG(PIPE_INFO) | KG(PIPE_PAGE) | KG(PIPE_SEC))
#define KP_SOCKET       (KG(SOCK_TEXT) | KG(SOCK) | KG(SOCK_INODE) | KG(SKB) | KG(SOCK_SEC))
#define KP_WAKE         (KG(WAKE_TEXT) | KG(RUNQUEUE))          /* plus the wakee's TASK */
#define KP_SLEEP        (KG(SCHED_TEXT) | KG(SWITCH_TEXT) | KG(RUNQUEUE) | KG(MM))   /* plus the next task's */
#define KP_NEXT_TASK    (KG(KSTACK) | KG(TASK) | KG(MM))       /* what a switch touches of the task it switches to */

/* The first page of a group (of its instance-th task, pipe or socket). */
uint64_t kpages_addr(const struct gen_layout *l, enum kgroup k, unsigned instance);
/* Pages of one group (per instance for per-task, per-pipe and per-socket groups). */
unsigned kpages_pages(enum kgroup k);
enum kscope kpages_scope(enum kgroup k);
/* Touches the groups in set for task `task`, pipe or socket `obj` (ignored for
** groups of other scopes); data groups are written when write is true. */
void kpages_touch(struct gen *g, unsigned vcpu, const struct gen_layout *l, uint64_t set, unsigned task,
                  unsigned obj, bool write);
/* Distinct pages of a set, per scope: how a touch set is documented and counted. */
unsigned kpages_count(uint64_t set, enum kscope scope);
/* Records a touch set in the trace metadata as "touch_set": user pages per
** operation, and the kernel's pages of set by scope (text, global, per task,
** per pipe, per socket). */
void kpages_meta(cJSON *meta, const struct gen_layout *l, uint64_t set, unsigned extra_user);
/* Records as "page_tables" how many shadow page tables the touch set needs:
** the 2 MB regions of one process's user pages (with a buffer of buf_bytes
** at buf), those of the kernel's pages for `tasks` tasks and `objs` pipes or
** sockets (shared by every address space), and the roots of a 32-bit guest:
** what decides when a bounded shadow pool thrashes (models/mmu/README.md). */
void kpages_page_tables_meta(cJSON *meta, const struct gen_layout *l, uint64_t set, unsigned tasks, unsigned objs,
                             uint64_t buf, uint64_t buf_bytes);

#endif
