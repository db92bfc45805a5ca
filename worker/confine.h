/*
 * Confinement of the children, applied once after the privilege drop and
 * never lifted (HACKING.md, "Confinement").
 *
 * Gate: Landlock takes away the whole file system (no path may be opened,
 * made or removed), TCP bind and connect, abstract unix sockets and
 * signals to processes outside the gate; then a seccomp allow-list of the
 * system calls a gate makes (its event loop, recvmsg/sendmsg on its channel
 * and clients, memory, getrandom, clocks, exit); any other call kills the
 * process (SIGSYS).  Worker: a seccomp deny-list of what a file server
 * never needs (ptrace, mount, bpf, kexec, modules, keys, namespaces,
 * execve, clock setting...), which fail with EPERM.  The descriptor
 * writer (worker/sdw.c): an allow-list of its few calls, like the gate's
 * (it holds CAP_SYS_ADMIN: nothing else may be reachable).  The ticket
 * helper (worker/krb.c): an allow-list of what MIT krb5 calls accepting
 * tickets (files for its replay cache and krb5.conf, no sockets).  All refuse
 * another architecture and x86's x32 calls by killing the process.
 */
#ifndef USMBD_WORKER_CONFINE_H
#define USMBD_WORKER_CONFINE_H

#include <linux/filter.h>

/* The filters, built once into static storage (for tests, too). */
const struct sock_fprog	*confine_gate_filter(void);
const struct sock_fprog	*confine_worker_filter(void);
const struct sock_fprog	*confine_sdw_filter(void);
const struct sock_fprog	*confine_krb_filter(void);

/*
 * Installs prog with PR_SET_NO_NEW_PRIVS first; 0 or -errno.  Every
 * thread of the caller gets it (SECCOMP_FILTER_FLAG_TSYNC).
 */
int	confine_seccomp(const struct sock_fprog *prog);

/*
 * Landlock: no file system access at all, no TCP bind or connect, no
 * abstract unix sockets or signals leaving the domain, as far as the
 * kernel's Landlock ABI goes.  Returns the ABI used (>= 1), 0 when the
 * kernel has no Landlock (nothing done), or -errno.
 */
int	confine_landlock_nothing(void);

/* A gate's whole confinement: Landlock (if any), then seccomp; 0 or -errno. */
int	confine_gate(void);
/* A worker's: seccomp; 0 or -errno. */
int	confine_worker(void);
/* The descriptor writer's: its allow-list; 0 or -errno. */
int	confine_sdw(void);
/* The ticket helper's: its allow-list (prctl PR_SET_DUMPABLE only). */
int	confine_krb(void);

#endif
