/*
 * Private to shm/: the LMDB handle, transaction helpers, key and record
 * codecs shared by the files of the module.  Nothing outside shm/ includes
 * this (the public interface is shm.h).
 *
 * Records are encoded with proto/cur.h: a version byte, then fields in
 * little-endian order; decoders return host values.  Keys are big-endian so
 * that LMDB's memcmp order is numeric order:
 *   opens    fid(16)            -> file header (delete pending)
 *            fid(16) pid(8)     -> open record
 *   brlocks  fid(16)            -> every lock and waiter of the file
 *   leases   client guid(16) lease key(16) -> lease record
 *   sessions session id(8)      -> session record
 *   durable  persistent id(8)   -> durable record
 *   workers  pid(4)             -> worker record; "\xff#idnext" -> id counter
 */
#ifndef USMBD_SHM_PRIV_H
#define USMBD_SHM_PRIV_H

#include <lmdb.h>
#include <string.h>

#include "proto/cur.h"
#include "shm/shm.h"

#define SHM_FID_KEY_LEN		16
#define SHM_OPEN_KEY_LEN	24
#define SHM_LEASE_KEY_LEN	32
#define SHM_REC_V1		1

struct shm {
	MDB_env		*env;
	MDB_dbi		 db_opens;
	MDB_dbi		 db_leases;
	MDB_dbi		 db_brlocks;
	MDB_dbi		 db_sessions;
	MDB_dbi		 db_durable;
	MDB_dbi		 db_workers;
	MDB_txn		*rtxn;		/* reset read transaction, renewed on use */
	int		 rtxn_live;
	pid_t		 pid;		/* the process that opened it */
	char		*dir;
	unsigned long	 nwrites;
	uint64_t	 id_next;	/* block of ids reserved for this process */
	uint64_t	 id_end;
	/* scratch for decoding a file's locks; grown, never shrunk */
	struct shm_brlock_rec	*brl_buf;
	unsigned		 brl_cap;
	struct shm_brlock_owner	*wait_buf;
	unsigned		 wait_cap;
};

/* Transactions.  Every error is returned as -errno. */
int	shm_err(int mdb_rc);
int	shm_wbegin(struct shm *, MDB_txn **);
int	shm_wcommit(struct shm *, MDB_txn *);
int	shm_rbegin(struct shm *, MDB_txn **);
void	shm_rend(struct shm *, MDB_txn *);
int	shm_grow(struct shm *);
/* For release paths: run once more after growing a full map. */
#define SHM_RETRY_FULL(s, rc, call) do {				\
	(rc) = (call);							\
	if ((rc) == -ENOSPC && shm_grow(s) == 0)			\
		(rc) = (call);						\
} while (0)

/* Keys. */
static inline void
shm_be64_put(uint8_t *p, uint64_t v)
{
	for (int i = 7; i >= 0; i--) {
		p[i] = (uint8_t)v;
		v >>= 8;
	}
}

static inline uint64_t
shm_be64_get(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 0; i < 8; i++)
		v = v << 8 | p[i];
	return v;
}

static inline void
shm_fid_key(uint8_t *k, const struct shm_file_id *fid)
{
	shm_be64_put(k, fid->dev);
	shm_be64_put(k + 8, fid->ino);
}

static inline void
shm_fid_from_key(struct shm_file_id *fid, const uint8_t *k)
{
	fid->dev = shm_be64_get(k);
	fid->ino = shm_be64_get(k + 8);
}

static inline void
shm_open_key(uint8_t *k, const struct shm_file_id *fid, uint64_t persistent_id)
{
	shm_fid_key(k, fid);
	shm_be64_put(k + 16, persistent_id);
}

static inline int
shm_guid_zero(const uint8_t *g)
{
	static const uint8_t z[SHM_GUID_LEN];

	return memcmp(g, z, SHM_GUID_LEN) == 0;
}

static inline void
shm_pids_add(struct shm_pids *p, pid_t pid)
{
	if (p == NULL || pid <= 0)
		return;
	for (unsigned i = 0; i < p->n; i++)
		if (p->pid[i] == pid)
			return;
	if (p->n == SHM_PIDS_MAX) {
		p->overflow = 1;
		return;
	}
	p->pid[p->n++] = pid;
}

/* Strings in records: u16 length + bytes; decoded NUL-terminated. */
void	shm_wstr(struct wcur *, const char *);
void	shm_rstr(struct cur *, char *dst, size_t size);

/* opens.c */
#define SHM_OPEN_ENC_MAX	128
size_t	shm_open_encode(uint8_t *buf, size_t size, const struct shm_open_rec *);
int	shm_open_decode(const void *buf, size_t len, struct shm_open_rec *);
int	shm_open_put_txn(struct shm *, MDB_txn *, const struct shm_file_id *,
	    const struct shm_open_rec *);
/* Removes the file header when no open is left; reports delete pending. */
int	shm_open_file_tidy_txn(struct shm *, MDB_txn *, const struct shm_file_id *,
	    int *last, int *delete_pending);

/* brlock.c: rewrite a file's locks; keep() returns 0 to drop (may edit). */
typedef int (*shm_brl_keep_fn)(struct shm_brlock_rec *, void *arg);
typedef int (*shm_brl_keepw_fn)(struct shm_brlock_owner *, void *arg);
int	shm_brlock_edit_txn(struct shm *, MDB_txn *, const struct shm_file_id *,
	    shm_brl_keep_fn, shm_brl_keepw_fn, void *arg, unsigned *nremoved,
	    struct shm_pids *wake);
int	shm_brlock_remove_open_txn(struct shm *, MDB_txn *, const struct shm_file_id *,
	    uint64_t persistent_id, struct shm_pids *wake);
int	shm_brlock_repid_txn(struct shm *, MDB_txn *, const struct shm_file_id *,
	    uint64_t persistent_id, pid_t pid);

/* leases.c */
int	shm_lease_grant_txn(struct shm *, MDB_txn *, const struct shm_file_id *,
	    struct shm_open_rec *new, struct shm_open_grant *);
int	shm_lease_release_txn(struct shm *, MDB_txn *, const struct shm_file_id *,
	    const uint8_t *client_guid, const uint8_t *lease_key);

/* durable.c */
int	shm_durable_put_txn(struct shm *, MDB_txn *, const struct shm_durable_rec *);
int	shm_durable_decode(const void *buf, size_t len, struct shm_durable_rec *);
int	shm_durable_disconnect_txn(struct shm *, MDB_txn *, uint64_t persistent_id,
	    uint64_t now_ms);

#endif
