/*
 * The partitions' lookups without a file id: the data env holding a lease
 * (by client GUID and lease key) or a durable record (by persistent id).
 * Each reads the data envs in turn: rare paths (an ack in another worker,
 * a reconnect, a disconnect), never a CREATE's or a CLOSE's.  With one
 * env they read nothing.
 */
#include <errno.h>

#include "shm/shm_priv.h"

/*
 * The data env (other than skip) whose database db holds key k: each read
 * in a transaction of its own.  -ENOENT when none has it.
 */
static int
part_find(struct shm *s, MDB_dbi db, MDB_val *k, const struct shm_env *skip,
    struct shm_env **env)
{
	MDB_val v;
	MDB_txn *txn;
	unsigned i;
	int rc;

	for (i = shm_data_first(s); i < s->nenv; i++) {
		if (&s->e[i] == skip)
			continue;
		if ((rc = shm_rbegin(s, &s->e[i], &txn)) != 0)
			return rc;
		rc = mdb_get(txn, db, k, &v);
		shm_rend(s, txn);
		if (rc == 0) {
			*env = &s->e[i];
			return 0;
		}
		if (rc != MDB_NOTFOUND)
			return shm_err(rc);
	}
	return -ENOENT;
}

/*
 * A lease lives in the data env of its file; a lookup by key alone (an
 * ack, a holder search: not per CREATE) reads each data env until one
 * has it.
 */
static int
lease_env_find(struct shm *s, const uint8_t *guid, const uint8_t *key,
    struct shm_env **env)
{
	uint8_t kb[SHM_LEASE_KEY_LEN];
	MDB_val k = { sizeof(kb), kb };

	if (shm_hint_zero_bucket(s, SHM_HINT_LEASES, shm_lease_bucket(guid, key)))
		return -ENOENT;
	memcpy(kb, guid, SHM_GUID_LEN);
	memcpy(kb + SHM_GUID_LEN, key, SHM_GUID_LEN);
	return part_find(s, s->db_leases, &k, NULL, env);
}

int
shm_lease_env(struct shm *s, const uint8_t *guid, const uint8_t *key,
    struct shm_env **env)
{
	if (s->nparts == 1) {
		*env = &s->e[0];
		return 0;
	}
	return lease_env_find(s, guid, key, env);
}

/*
 * A durable record lives with its open, in the data env of its file; a
 * lookup by persistent id alone (a reconnect, a disconnect: not per
 * request) reads each data env until one has it.
 */
int
shm_durable_env(struct shm *s, uint64_t id, struct shm_env **env)
{
	uint8_t kb[8];
	MDB_val k = { sizeof(kb), kb };

	if (s->nparts == 1) {
		*env = &s->e[0];
		return 0;
	}
	shm_be64_put(kb, id);
	return part_find(s, s->db_durable, &k, NULL, env);
}
