/*
 * seccomp and Landlock for gates, workers, the descriptor writer and the
 * ticket helper (worker/confine.h).  The BPF
 * programs are written by hand with linux/filter.h: no library.
 *
 * How the gate's list was found: `strace -f -c` and `strace -f` of a gate
 * (HACKING.md, "Confinement") through logins by smbclient and impacket
 * (NTLMv2, signing, SMB 3.1.1 preauth), failed logins, a client that sends
 * nothing, a hand-off and a binding hand-off, usmbctl ping / metrics /
 * debug, reload (the gate is replaced), retirement after its connections
 * and shutdown; the calls seen after the point where the filter goes on,
 * plus what glibc may make on the same paths.
 */

/*
 * What each filter allows, and how the lists were found.
 *
 * - Gate: Landlock (ABI 1-7 as the kernel has it) handling every file
 *   system right with no rule, so no path can be opened, made or
 *   removed; TCP bind and connect (ABI 4); abstract unix sockets and
 *   signals outside the gate (ABI 6).  Then a seccomp allow-list:
 *   epoll_wait/epoll_pwait, epoll_ctl, read, write, writev, close,
 *   recvmsg, sendmsg, recvfrom, sendto, shutdown, fcntl, getsockopt,
 *   getpeername, brk, mmap (never PROT_EXEC), munmap, mremap, madvise,
 *   getrandom, clock_gettime, gettimeofday, getpid, gettid, futex,
 *   rt_sigreturn, rt_sigprocmask, rt_sigaction, restart_syscall,
 *   nanosleep, clock_nanosleep, exit, exit_group, tgkill.  Anything
 *   else: SECCOMP_RET_KILL_PROCESS (SIGSYS); the master logs the death
 *   and starts a fresh gate.  The list is what strace -ff showed of
 *   gates through smbclient (SMB2 and 3.1.1, signed, encrypted),
 *   impacket, bad passwords, the hostile pre-auth cases, usmbctl
 *   ping/metrics/debug/status, reload and retirement (epoll_wait,
 *   epoll_ctl, read, recvmsg, sendmsg, sendto, fcntl, close, getrandom,
 *   brk, exit_group; clocks go by the vDSO), plus what glibc makes on
 *   the same paths.  Since a gate cannot read its config again, a reload
 *   retires the gates (as after their last connection: logins in flight
 *   finish) and starts new ones (daemon/spawn.c spawn_broadcast).
 * - Descriptor writer (worker/sdw.c, after its drop to the usmbd account
 *   with CAP_SYS_ADMIN): a seccomp allow-list built like the gate's
 *   (mmap never PROT_EXEC, anything else SIGSYS): epoll_wait,
 *   epoll_pwait, epoll_ctl, accept4, getsockopt, recvmsg, sendmsg,
 *   recvfrom, sendto, read, write, writev, close, fcntl, fstat,
 *   newfstatat, fgetxattr, fsetxattr, getxattr, setxattr (the last two
 *   on /proc/self/fd names of O_PATH opens), and the gate's memory,
 *   clock, signal, futex and exit calls.  strace -f of the writer
 *   through t/integ/acl.sh showed accept4, getsockopt, epoll_wait,
 *   epoll_ctl, recvmsg, sendmsg, sendto, newfstatat, fgetxattr,
 *   fsetxattr, close, exit_group.  Its epoll instance is made before the
 *   filter.  A killed writer is restarted by the master like any child.
 * - Ticket helper (worker/krb.c, as usmbd-krb): an allow-list built like
 *   the writer's, confine_krb_calls below with how it was found (strace
 *   -ff of the whole server through the Kerberos paths: the helper's
 *   calls after its filter were exactly those).  prctl only with
 *   PR_SET_DUMPABLE (the keytab's /proc/self/fd moment).  GSSAPI's
 *   mechanism glue, which may dlopen plugins, is initialised before the
 *   filter (krb_warm_up).
 * - Worker: a seccomp deny-list, each call failing with EPERM: ptrace,
 *   process_vm_readv/writev, pidfd_getfd, process_madvise, kcmp, mount
 *   and the new mount API, umount2, pivot_root, chroot, setns, unshare,
 *   clone with a CLONE_NEW* flag (clone3 gets ENOSYS so glibc falls back
 *   to clone, whose flags a filter can read), bpf, perf_event_open,
 *   userfaultfd, kexec_load/kexec_file_load, reboot,
 *   init/finit/delete_module, keyctl/add_key/request_key,
 *   swapon/swapoff, acct, quotactl, quotactl_fd but its Q_GETQUOTA of a
 *   user or group (what the share's free space needs: worker/smb2_info.c;
 *   the kernel lets an unprivileged caller read only its own uid's and
 *   groups'), settimeofday, clock_settime,
 *   clock_adjtime, adjtimex, sethostname, setdomainname, syslog,
 *   personality, vhangup, fanotify_init, open_by_handle_at,
 *   name_to_handle_at (file handles bypass path checks), execve/execveat
 *   (a worker runs no program), iopl, ioperm, modify_ldt, uselib, sysfs,
 *   ustat, _sysctl.  io_uring operations do not pass seccomp; none of
 *   them reaches these.  ioctl is not on the list, so the worker's
 *   own commands pass (FS_IOC_GETVERSION; FICLONERANGE for block cloning
 *   and XFS_IOC_FSGEOMETRY at a tree connect, which check_confine's
 *   test_worker_denies checks) and so does any other.
 */
#include "worker/confine.h"

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/audit.h>
#include <linux/seccomp.h>

#if defined(__x86_64__)
#define CONFINE_ARCH	AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define CONFINE_ARCH	AUDIT_ARCH_AARCH64
#else
#error "worker/confine.c: no seccomp filter for this architecture"
#endif

#ifndef __X32_SYSCALL_BIT
#define __X32_SYSCALL_BIT	0x40000000
#endif

/* Sanitizer builds (tests only): their runtime's calls are let through. */
#if defined(__SANITIZE_ADDRESS__)
#define CONFINE_SANITIZED	1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CONFINE_SANITIZED	1
#endif
#endif

#define CONFINE_MAX_INSNS	256

/*
 * What a gate calls once the filter is on.  Seen (strace, see above):
 * epoll_wait, epoll_ctl, read, recvmsg, sendmsg, sendto, fcntl, close,
 * getrandom, brk, exit_group; clock_gettime goes by the vDSO.  The rest are
 * what glibc makes on the same paths when it does (recv is recvfrom, a
 * large malloc is mmap, abort is rt_sigprocmask + tgkill).  mmap is checked
 * further: never with PROT_EXEC; mprotect is not there at all.
 */
static const int confine_gate_calls[] = {
	/* the event loop and the channel and client sockets */
	SYS_epoll_wait, SYS_epoll_pwait, SYS_epoll_ctl,
	SYS_read, SYS_write, SYS_writev, SYS_close,
	SYS_recvmsg, SYS_sendmsg, SYS_recvfrom, SYS_sendto,
	SYS_shutdown, SYS_fcntl, SYS_getsockopt, SYS_getpeername,
	/* memory (malloc, gnutls); mmap is checked before this list */
	SYS_brk, SYS_munmap, SYS_mremap, SYS_madvise,
	/* randomness, time, identity */
	SYS_getrandom, SYS_clock_gettime, SYS_gettimeofday,
	SYS_getpid, SYS_gettid,
	/* libc internals: locks, signals, sleeps, restarts */
	SYS_futex, SYS_rt_sigreturn, SYS_rt_sigprocmask, SYS_rt_sigaction,
	SYS_restart_syscall, SYS_nanosleep, SYS_clock_nanosleep,
	/* the end (exit, or abort() on a broken invariant) */
	SYS_exit, SYS_exit_group, SYS_tgkill,
#ifdef CONFINE_SANITIZED
	SYS_sigaltstack, SYS_prctl, SYS_openat, SYS_readlink, SYS_newfstatat,
	SYS_getdents64, SYS_sched_getaffinity, SYS_pread64, SYS_lseek,
	SYS_getppid, SYS_wait4, SYS_clone, SYS_execve, SYS_pipe2,
	SYS_dup2, SYS_ioctl, SYS_kill, SYS_getuid, SYS_geteuid,
	SYS_process_vm_readv, SYS_ptrace, SYS_mprotect,
#endif
};

/*
 * What the descriptor writer (worker/sdw.c) calls once the filter is on:
 * its event loop, accept4 and getsockopt (SO_PEERCRED, SO_PEERGROUPS) on
 * its socket, recvmsg/send(to) of requests and answers and of the master's
 * channel (logging too), fstat, the four xattr calls (by fd, and by the
 * /proc/self/fd name for an O_PATH open), close.  Seen with `strace -f`
 * of the writer through t/integ/acl.sh; the rest as for the gate (what
 * glibc makes on the same paths).  It holds CAP_SYS_ADMIN, so every call
 * left out is one that capability cannot be turned to: no open, no
 * mount, no namespace, no exec, no socket, no ioctl.
 */
static const int confine_sdw_calls[] = {
	SYS_epoll_wait, SYS_epoll_pwait, SYS_epoll_ctl,
	SYS_accept4, SYS_getsockopt, SYS_recvmsg, SYS_sendmsg,
	SYS_recvfrom, SYS_sendto, SYS_read, SYS_write, SYS_writev,
	SYS_close, SYS_fcntl,
	SYS_fstat, SYS_newfstatat,
	SYS_fgetxattr, SYS_fsetxattr, SYS_getxattr, SYS_setxattr,
	SYS_brk, SYS_munmap, SYS_mremap, SYS_madvise,
	SYS_getrandom, SYS_clock_gettime, SYS_gettimeofday,
	SYS_getpid, SYS_gettid,
	SYS_futex, SYS_rt_sigreturn, SYS_rt_sigprocmask, SYS_rt_sigaction,
	SYS_restart_syscall, SYS_nanosleep, SYS_clock_nanosleep,
	SYS_exit, SYS_exit_group, SYS_tgkill,
#ifdef CONFINE_SANITIZED
	SYS_sigaltstack, SYS_prctl, SYS_openat, SYS_readlink,
	SYS_getdents64, SYS_sched_getaffinity, SYS_pread64, SYS_lseek,
	SYS_getppid, SYS_wait4, SYS_clone, SYS_execve, SYS_pipe2,
	SYS_dup2, SYS_ioctl, SYS_kill, SYS_getuid, SYS_geteuid,
	SYS_process_vm_readv, SYS_ptrace, SYS_mprotect,
#endif
};

/*
 * What the ticket helper (worker/krb.c, as usmbd-krb) calls once the
 * filter is on.  Seen with `strace -f -p` of the helper through
 * smbclient -k logons, Kerberos after NegoEx (krb_client.py negoex: good,
 * bad and two-leg MICs), 20 malformed AP-REQs and a reload that hands it
 * the keytab again: recvmsg, sendmsg (its channel and MSG_LOG); the
 * replay cache (/var/tmp/krb5_UID.rcache2: openat, newfstatat, fcntl
 * F_OFD_SETLKW, lseek, read, write); MIT's profile rechecking krb5.conf
 * (newfstatat, access; it reopens a changed one: openat, read, close);
 * the authdata plugin directory (openat, getdents64 where it exists);
 * /etc/localtime; geteuid (the replay cache's name); getrandom; at a
 * keytab: memfd_create, pread64, write, prctl(PR_SET_DUMPABLE), openat of
 * /proc/self/fd/N.  prctl is checked further: PR_SET_DUMPABLE only.  The
 * rest as for the gate (what glibc makes on the same paths), plus fstat,
 * pwrite64 and ftruncate of the replay cache's kind of file I/O.  No
 * socket, connect, exec, mount, namespace or ptrace: a ticket that
 * exploits the library finds no network and no way out of the account.
 */
static const int confine_krb_calls[] = {
	SYS_recvmsg, SYS_sendmsg, SYS_recvfrom, SYS_sendto,
	SYS_read, SYS_write, SYS_writev, SYS_close, SYS_fcntl,
	/* the replay cache, krb5.conf, plugins, the keytab's memfd */
	SYS_openat, SYS_newfstatat, SYS_fstat, SYS_access, SYS_lseek,
	SYS_pread64, SYS_pwrite64, SYS_ftruncate, SYS_getdents64,
	SYS_memfd_create, SYS_prctl,
	SYS_brk, SYS_munmap, SYS_mremap, SYS_madvise,
	SYS_getrandom, SYS_clock_gettime, SYS_gettimeofday,
	SYS_getpid, SYS_gettid, SYS_geteuid, SYS_getuid,
	SYS_futex, SYS_rt_sigreturn, SYS_rt_sigprocmask, SYS_rt_sigaction,
	SYS_restart_syscall, SYS_nanosleep, SYS_clock_nanosleep,
	SYS_exit, SYS_exit_group, SYS_tgkill,
#ifdef CONFINE_SANITIZED
	SYS_sigaltstack, SYS_readlink,
	SYS_sched_getaffinity,
	SYS_getppid, SYS_wait4, SYS_clone, SYS_execve, SYS_pipe2,
	SYS_dup2, SYS_ioctl, SYS_kill, SYS_process_vm_readv, SYS_ptrace,
	SYS_mprotect,
#endif
};

/*
 * What a worker never calls: each fails with EPERM.  Debugging, other
 * processes' memory and descriptors, the kernel itself (modules, kexec,
 * bpf, perf), mounts and namespaces, keys, clocks, swap, quotas,
 * accounting, file handles (which bypass path checks), programs.
 */
static const int confine_worker_denied[] = {
	SYS_ptrace, SYS_process_vm_readv, SYS_process_vm_writev,
	SYS_pidfd_getfd, SYS_process_madvise, SYS_kcmp,
	SYS_mount, SYS_umount2, SYS_pivot_root, SYS_chroot,
	SYS_move_mount, SYS_open_tree, SYS_fsopen, SYS_fsconfig,
	SYS_fsmount, SYS_fspick, SYS_mount_setattr,
	SYS_setns, SYS_unshare,
	SYS_bpf, SYS_perf_event_open, SYS_userfaultfd,
	SYS_kexec_load, SYS_kexec_file_load, SYS_reboot,
	SYS_init_module, SYS_finit_module, SYS_delete_module,
	SYS_keyctl, SYS_add_key, SYS_request_key,
	SYS_swapon, SYS_swapoff, SYS_acct, SYS_quotactl,
	SYS_settimeofday, SYS_clock_settime, SYS_clock_adjtime,
	SYS_adjtimex, SYS_sethostname, SYS_setdomainname, SYS_syslog,
	SYS_personality, SYS_vhangup, SYS_fanotify_init,
	SYS_open_by_handle_at, SYS_name_to_handle_at,
	SYS_execve, SYS_execveat,
#if defined(__x86_64__)
	SYS_iopl, SYS_ioperm, SYS_modify_ldt, SYS_uselib, SYS_sysfs,
	SYS_ustat, SYS__sysctl,
#endif
};

#ifndef SYS_quotactl_fd
#define SYS_quotactl_fd	443
#endif
/* QCMD(Q_GETQUOTA, USRQUOTA) and (.., GRPQUOTA), linux/quota.h */
#define CONFINE_Q_GETQUOTA_USR	0x80000700u
#define CONFINE_Q_GETQUOTA_GRP	0x80000701u

/* Namespaces: clone with any of these fails like unshare. */
#define CONFINE_CLONE_NS	(CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWIPC | \
	CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWCGROUP | 0x80)
	/* 0x80 = CLONE_NEWTIME, not in every libc's sched.h */

struct confine_prog {
	struct sock_filter	 insn[CONFINE_MAX_INSNS];
	unsigned		 n;
	int			 overflow;
	struct sock_fprog	 fprog;
	int			 built;
};

static void
confine_emit(struct confine_prog *p, struct sock_filter f)
{
	if (p->n >= CONFINE_MAX_INSNS) {
		p->overflow = 1;
		return;
	}
	p->insn[p->n++] = f;
}

#define LD(off)		(struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, (off))
#define RET(v)		(struct sock_filter)BPF_STMT(BPF_RET | BPF_K, (v))
#define JEQ(k, t, f)	(struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (k), (t), (f))
#define JGE(k, t, f)	(struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, (k), (t), (f))
#define JSET(k, t, f)	(struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, (k), (t), (f))

#define OFF_NR		offsetof(struct seccomp_data, nr)
#define OFF_ARCH	offsetof(struct seccomp_data, arch)
/* The low 32 bits of args[0] (little-endian). */
#define OFF_ARG0_LO	offsetof(struct seccomp_data, args[0])
#define OFF_ARG1_LO	offsetof(struct seccomp_data, args[1])
#define OFF_ARG2_LO	offsetof(struct seccomp_data, args[2])

/*
 * The common head: another architecture (a 32-bit int 0x80 call, say)
 * and x32 calls would reach other numbers than the lists mean: kill.
 */
static void
confine_head(struct confine_prog *p)
{
	confine_emit(p, LD(OFF_ARCH));
	confine_emit(p, JEQ(CONFINE_ARCH, 1, 0));
	confine_emit(p, RET(SECCOMP_RET_KILL_PROCESS));
	confine_emit(p, LD(OFF_NR));
#if defined(__x86_64__)
	confine_emit(p, JGE(__X32_SYSCALL_BIT, 0, 1));
	confine_emit(p, RET(SECCOMP_RET_KILL_PROCESS));
#endif
}

static const struct sock_fprog *
confine_done(struct confine_prog *p)
{
	if (p->overflow)
		return NULL;
	p->fprog.len = (unsigned short)p->n;
	p->fprog.filter = p->insn;
	p->built = 1;
	return &p->fprog;
}

/*
 * An allow-list: mmap never with PROT_EXEC (a confined child maps no code
 * after it started, so injected code has nowhere to run from), then the
 * calls of the list; anything else kills the process (SIGSYS).
 */
static const struct sock_fprog *
confine_allow(struct confine_prog *p, const int *calls, unsigned n,
    int prctl_op)
{
	unsigned i;

	if (p->built)
		return &p->fprog;
	confine_head(p);
	confine_emit(p, JEQ(SYS_mmap, 0, 4));
	confine_emit(p, LD(OFF_ARG2_LO));
	confine_emit(p, JSET(PROT_EXEC, 0, 1));
	confine_emit(p, RET(SECCOMP_RET_KILL_PROCESS));
	confine_emit(p, RET(SECCOMP_RET_ALLOW));
#ifndef CONFINE_SANITIZED
	/* prctl, when listed, only for prctl_op (its first argument). */
	if (prctl_op >= 0) {
		confine_emit(p, JEQ(SYS_prctl, 0, 4));
		confine_emit(p, LD(OFF_ARG0_LO));
		confine_emit(p, JEQ((uint32_t)prctl_op, 1, 0));
		confine_emit(p, RET(SECCOMP_RET_KILL_PROCESS));
		confine_emit(p, RET(SECCOMP_RET_ALLOW));
	}
#endif
	/* Each match jumps to the ALLOW after the final KILL. */
	for (i = 0; i < n; i++)
		confine_emit(p, JEQ((uint32_t)calls[i], (uint8_t)(n - i), 0));
	confine_emit(p, RET(SECCOMP_RET_KILL_PROCESS));
	confine_emit(p, RET(SECCOMP_RET_ALLOW));
	return confine_done(p);
}

const struct sock_fprog *
confine_gate_filter(void)
{
	static struct confine_prog p;

	return confine_allow(&p, confine_gate_calls,
	    sizeof(confine_gate_calls) / sizeof(confine_gate_calls[0]), -1);
}

const struct sock_fprog *
confine_sdw_filter(void)
{
	static struct confine_prog p;

	return confine_allow(&p, confine_sdw_calls,
	    sizeof(confine_sdw_calls) / sizeof(confine_sdw_calls[0]), -1);
}

const struct sock_fprog *
confine_krb_filter(void)
{
	static struct confine_prog p;

	return confine_allow(&p, confine_krb_calls,
	    sizeof(confine_krb_calls) / sizeof(confine_krb_calls[0]),
	    PR_SET_DUMPABLE);
}

const struct sock_fprog *
confine_worker_filter(void)
{
	static struct confine_prog p;
	unsigned i, n = sizeof(confine_worker_denied) /
	    sizeof(confine_worker_denied[0]);

	if (p.built)
		return &p.fprog;
	confine_head(&p);
	/*
	 * clone3 passes its flags in memory a filter cannot read: ENOSYS
	 * makes glibc fall back to clone, whose flags it can.
	 */
	confine_emit(&p, JEQ(SYS_clone3, 0, 1));
	confine_emit(&p, RET(SECCOMP_RET_ERRNO | ENOSYS));
	confine_emit(&p, JEQ(SYS_clone, 0, 3));
	confine_emit(&p, LD(OFF_ARG0_LO));
	/*
	 * No namespace flag: straight to the ALLOW (A holds the flags now),
	 * past the EPERM, quotactl_fd's 5 and the n compares.
	 */
	confine_emit(&p, JSET(CONFINE_CLONE_NS, 0, (uint8_t)(n + 6)));
	confine_emit(&p, RET(SECCOMP_RET_ERRNO | EPERM));
	/* quotactl_fd: reading a quota only (A is the call's number again). */
	confine_emit(&p, JEQ(SYS_quotactl_fd, 0, 4));
	confine_emit(&p, LD(OFF_ARG1_LO));
	confine_emit(&p, JEQ(CONFINE_Q_GETQUOTA_USR, (uint8_t)(n + 2), 0));
	confine_emit(&p, JEQ(CONFINE_Q_GETQUOTA_GRP, (uint8_t)(n + 1), 0));
	confine_emit(&p, RET(SECCOMP_RET_ERRNO | EPERM));
	/* Each match jumps to the EPERM after the final ALLOW. */
	for (i = 0; i < n; i++)
		confine_emit(&p, JEQ((uint32_t)confine_worker_denied[i],
		    (uint8_t)(n - i), 0));
	confine_emit(&p, RET(SECCOMP_RET_ALLOW));
	confine_emit(&p, RET(SECCOMP_RET_ERRNO | EPERM));
	return confine_done(&p);
}

int
confine_seccomp(const struct sock_fprog *prog)
{
	if (prog == NULL)
		return -E2BIG;
	/* Without it an unprivileged process may not install a filter. */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1)
		return -errno;
	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
	    SECCOMP_FILTER_FLAG_TSYNC, prog) != 0)
		return -errno;
	return 0;
}

/* Landlock, by number and layout: libc has no wrappers. */
#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset	444
#define SYS_landlock_restrict_self	446
#endif
#define LL_CREATE_RULESET_VERSION	(1u << 0)

struct confine_ll_attr {
	uint64_t	fs;		/* ABI 1 */
	uint64_t	net;		/* ABI 4 */
	uint64_t	scoped;		/* ABI 6 */
};

int
confine_landlock_nothing(void)
{
	struct confine_ll_attr a;
	size_t size;
	long abi;
	int fd, rc = 0;

	abi = syscall(SYS_landlock_create_ruleset, NULL, 0,
	    LL_CREATE_RULESET_VERSION);
	if (abi < 1)
		return 0;	/* no Landlock here (ENOSYS, EOPNOTSUPP) */
	memset(&a, 0, sizeof(a));
	/*
	 * Every file system right of the ABI, with no rule granting any:
	 * bits 0-12 execute .. make_sym (ABI 1), refer (2), truncate (3),
	 * ioctl on devices (5).
	 */
	a.fs = (1ull << 13) - 1;
	if (abi >= 2)
		a.fs |= 1ull << 13;
	if (abi >= 3)
		a.fs |= 1ull << 14;
	if (abi >= 5)
		a.fs |= 1ull << 15;
	size = sizeof(a.fs);
	if (abi >= 4) {
		a.net = (1ull << 0) | (1ull << 1);	/* bind, connect TCP */
		size = offsetof(struct confine_ll_attr, scoped);
	}
	if (abi >= 6) {
		/* abstract unix sockets, signals: only within the domain */
		a.scoped = (1ull << 0) | (1ull << 1);
		size = sizeof(a);
	}
	fd = (int)syscall(SYS_landlock_create_ruleset, &a, size, 0);
	if (fd < 0)
		return -errno;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1 ||
	    syscall(SYS_landlock_restrict_self, fd, 0) != 0)
		rc = -errno;
	close(fd);
	return rc != 0 ? rc : (int)abi;
}

int
confine_gate(void)
{
	int rc;

	if ((rc = confine_landlock_nothing()) < 0)
		return rc;
	return confine_seccomp(confine_gate_filter());
}

int
confine_sdw(void)
{
	return confine_seccomp(confine_sdw_filter());
}

int
confine_krb(void)
{
	return confine_seccomp(confine_krb_filter());
}

int
confine_worker(void)
{
	return confine_seccomp(confine_worker_filter());
}
