/*
 * The password database: one LMDB file, `private dir`/passdb.mdb (opened
 * with MDB_NOSUBDIR so the private directory can hold other secrets such as
 * the server GUID), synced on every commit.  The directory is 0700 and the
 * files 0600: the NT hashes are password equivalents.
 *
 * Key: the user name lower-cased (Windows user names are case-insensitive).
 * Value, little-endian, written and read with proto/cur.h cursors:
 *   u8 version (1) | u16 len, name | u16 len, unix_name | u32 uid |
 *   16 nt_hash | u32 flags | u64 changed | u64 last_logon | u32 failed_logons
 * version 2 appends | u64 locked_at.
 * Later versions may only append fields, so an older reader can still use
 * a newer record's prefix.
 *
 * The account policy is one more record, under a key no user name can
 * have (PASSDB_POLICY_KEY: names have no control characters):
 *   u8 version (1) | u32 bad lockout attempts | u32 lockout duration
 */
#include "daemon/passdb.h"

#include <ctype.h>
#include <errno.h>
#include <lmdb.h>
#include <md4.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proto/cur.h"

#define PASSDB_FILE		"passdb.mdb"
#define PASSDB_VERSION		2
#define PASSDB_REC_MAX		(1 + 2 + PASSDB_NAME_MAX + 2 + PASSDB_NAME_MAX + 4 + 16 + 4 + 8 + 8 + 4 + 8)
#define PASSDB_POLICY_KEY	"\001policy"
#define PASSDB_POLICY_LEN	(sizeof(PASSDB_POLICY_KEY) - 1)
#define PASSDB_MAP_SIZE		(16u << 20)

struct passdb {
	MDB_env		*env;
	MDB_dbi		 dbi;
	int		 readonly;
};

/* LMDB returns its own codes above errno's range; map them to -errno. */
static int
passdb_errno(int rc)
{
	switch (rc) {
	case 0:
		return 0;
	case MDB_NOTFOUND:
		return -ENOENT;
	case MDB_MAP_FULL:
		return -ENOSPC;
	case MDB_INVALID:
	case MDB_CORRUPTED:
	case MDB_VERSION_MISMATCH:
		return -EIO;
	default:
		return rc > 0 ? -rc : -EIO;
	}
}

/* mkdir -p, the last component 0700 and tightened if it already exists. */
static int
passdb_mkdir(const char *dir)
{
	char buf[4096], *s;
	struct stat st;
	size_t len = strlen(dir);

	if (len == 0 || len >= sizeof(buf))
		return -ENAMETOOLONG;
	memcpy(buf, dir, len + 1);
	for (s = buf + 1; *s != '\0'; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(buf, 0755) < 0 && errno != EEXIST)
			return -errno;
		*s = '/';
	}
	if (mkdir(buf, 0700) < 0 && errno != EEXIST)
		return -errno;
	if (stat(buf, &st) < 0)
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	if ((st.st_mode & 077) != 0 && chmod(buf, 0700) < 0)
		return -errno;
	return 0;
}

int
passdb_open(const char *private_dir, int readonly, struct passdb **out)
{
	struct passdb *db;
	MDB_txn *txn = NULL;
	char path[4096];
	mode_t old_umask;
	int rc;

	*out = NULL;
	if (snprintf(path, sizeof(path), "%s/%s", private_dir, PASSDB_FILE) >=
	    (int)sizeof(path))
		return -ENAMETOOLONG;
	if (!readonly && (rc = passdb_mkdir(private_dir)) < 0)
		return rc;
	if ((db = calloc(1, sizeof(*db))) == NULL)
		return -ENOMEM;
	db->readonly = readonly;
	if ((rc = mdb_env_create(&db->env)) != 0) {
		db->env = NULL;
		goto out;
	}
	if ((rc = mdb_env_set_mapsize(db->env, PASSDB_MAP_SIZE)) != 0)
		goto out;
	/* umask as well as the mode: the lock file is created by LMDB too */
	old_umask = umask(077);
	rc = mdb_env_open(db->env, path, MDB_NOSUBDIR | (readonly ? MDB_RDONLY : 0), 0600);
	umask(old_umask);
	if (rc != 0)
		goto out;
	if ((rc = mdb_txn_begin(db->env, NULL, readonly ? MDB_RDONLY : 0, &txn)) != 0)
		goto out;
	if ((rc = mdb_dbi_open(txn, NULL, 0, &db->dbi)) != 0)
		goto out;
	rc = mdb_txn_commit(txn);
	txn = NULL;
out:
	if (txn != NULL)
		mdb_txn_abort(txn);
	if (rc != 0) {
		if (db->env != NULL)
			mdb_env_close(db->env);
		free(db);
		return passdb_errno(rc);
	}
	*out = db;
	return 0;
}

void
passdb_close(struct passdb *db)
{
	if (db == NULL)
		return;
	mdb_env_close(db->env);
	free(db);
}

/* Printable, no separators that would confuse logs or smbpasswd files. */
static int
passdb_name_ok(const char *name)
{
	size_t len = strlen(name);
	const unsigned char *s;

	if (len == 0 || len >= PASSDB_NAME_MAX)
		return 0;
	for (s = (const unsigned char *)name; *s != '\0'; s++)
		if (*s < 0x20 || *s == 0x7f || *s == ':' || *s == '/' || *s == '\\')
			return 0;
	return 1;
}

static int
passdb_key(const char *name, char key[PASSDB_NAME_MAX], MDB_val *k)
{
	size_t i, len;

	if (!passdb_name_ok(name))
		return -EINVAL;
	len = strlen(name);
	for (i = 0; i < len; i++)
		key[i] = (char)tolower((unsigned char)name[i]);
	k->mv_data = key;
	k->mv_size = len;
	return 0;
}

static size_t
passdb_encode(const struct passdb_entry *e, uint8_t *buf, size_t cap)
{
	struct wcur w;
	size_t nl = strnlen(e->name, PASSDB_NAME_MAX - 1);
	size_t ul = strnlen(e->unix_name, PASSDB_NAME_MAX - 1);

	wcur_init(&w, buf, cap);
	wcur_u8(&w, PASSDB_VERSION);
	wcur_le16(&w, (uint16_t)nl);
	wcur_bytes(&w, e->name, nl);
	wcur_le16(&w, (uint16_t)ul);
	wcur_bytes(&w, e->unix_name, ul);
	wcur_le32(&w, (uint32_t)e->uid);
	wcur_bytes(&w, e->nt_hash, 16);
	wcur_le32(&w, e->flags);
	wcur_le64(&w, (uint64_t)(int64_t)e->changed);
	wcur_le64(&w, (uint64_t)(int64_t)e->last_logon);
	wcur_le32(&w, e->failed_logons);
	wcur_le64(&w, (uint64_t)(int64_t)e->locked_at);
	return w.err ? 0 : wcur_off(&w);
}

static int
passdb_str(struct cur *c, char out[PASSDB_NAME_MAX])
{
	uint16_t len = cur_le16(c);

	if (len >= PASSDB_NAME_MAX) {
		c->err = 1;
		return -1;
	}
	cur_bytes(c, out, len);
	out[len] = '\0';
	return c->err ? -1 : 0;
}

static int
passdb_decode(struct passdb_entry *e, const void *p, size_t len)
{
	struct cur c;
	uint8_t version;

	memset(e, 0, sizeof(*e));
	cur_init(&c, p, len);
	version = cur_u8(&c);
	if (c.err || version < 1)
		return -EIO;
	passdb_str(&c, e->name);
	passdb_str(&c, e->unix_name);
	e->uid = (uid_t)cur_le32(&c);
	cur_bytes(&c, e->nt_hash, 16);
	e->flags = cur_le32(&c);
	e->changed = (time_t)(int64_t)cur_le64(&c);
	e->last_logon = (time_t)(int64_t)cur_le64(&c);
	e->failed_logons = cur_le32(&c);
	if (version >= 2)
		e->locked_at = (time_t)(int64_t)cur_le64(&c);
	/* versions we know are consumed exactly; a later one may append */
	if (c.err || (version <= PASSDB_VERSION && cur_left(&c) != 0))
		return -EIO;
	return 0;
}

int
passdb_get(struct passdb *db, const char *name, struct passdb_entry *out)
{
	char key[PASSDB_NAME_MAX];
	MDB_txn *txn;
	MDB_val k, v;
	int rc;

	memset(out, 0, sizeof(*out));
	if ((rc = passdb_key(name, key, &k)) < 0)
		return rc == -EINVAL ? -ENOENT : rc;
	if ((rc = mdb_txn_begin(db->env, NULL, MDB_RDONLY, &txn)) != 0)
		return passdb_errno(rc);
	rc = mdb_get(txn, db->dbi, &k, &v);
	if (rc == 0)
		rc = passdb_decode(out, v.mv_data, v.mv_size);
	else
		rc = passdb_errno(rc);
	mdb_txn_abort(txn);
	return rc;
}

int
passdb_put(struct passdb *db, const struct passdb_entry *e)
{
	uint8_t rec[PASSDB_REC_MAX];
	char key[PASSDB_NAME_MAX];
	MDB_txn *txn;
	MDB_val k, v;
	size_t len;
	int rc;

	if (db->readonly)
		return -EROFS;
	if (memchr(e->name, '\0', sizeof(e->name)) == NULL ||
	    memchr(e->unix_name, '\0', sizeof(e->unix_name)) == NULL ||
	    !passdb_name_ok(e->unix_name))
		return -EINVAL;
	if ((rc = passdb_key(e->name, key, &k)) < 0)
		return rc;
	if ((len = passdb_encode(e, rec, sizeof(rec))) == 0)
		return -EINVAL;
	v.mv_data = rec;
	v.mv_size = len;
	if ((rc = mdb_txn_begin(db->env, NULL, 0, &txn)) != 0)
		return passdb_errno(rc);
	if ((rc = mdb_put(txn, db->dbi, &k, &v, 0)) != 0) {
		mdb_txn_abort(txn);
		explicit_bzero(rec, sizeof(rec));
		return passdb_errno(rc);
	}
	rc = mdb_txn_commit(txn);
	explicit_bzero(rec, sizeof(rec));
	return passdb_errno(rc);
}

int
passdb_del(struct passdb *db, const char *name)
{
	char key[PASSDB_NAME_MAX];
	MDB_txn *txn;
	MDB_val k;
	int rc;

	if (db->readonly)
		return -EROFS;
	if ((rc = passdb_key(name, key, &k)) < 0)
		return rc == -EINVAL ? -ENOENT : rc;
	if ((rc = mdb_txn_begin(db->env, NULL, 0, &txn)) != 0)
		return passdb_errno(rc);
	if ((rc = mdb_del(txn, db->dbi, &k, NULL)) != 0) {
		mdb_txn_abort(txn);
		return passdb_errno(rc);
	}
	return passdb_errno(mdb_txn_commit(txn));
}

/*
 * The entries are copied out and the transaction ended before fn runs, so
 * fn may itself write to the database.
 */
int
passdb_foreach(struct passdb *db, int (*fn)(const struct passdb_entry *, void *),
    void *arg)
{
	struct passdb_entry *all = NULL, *na;
	size_t n = 0, cap = 0, i;
	MDB_cursor *cur = NULL;
	MDB_txn *txn;
	MDB_val k, v;
	int rc, op;

	if ((rc = mdb_txn_begin(db->env, NULL, MDB_RDONLY, &txn)) != 0)
		return passdb_errno(rc);
	if ((rc = mdb_cursor_open(txn, db->dbi, &cur)) != 0) {
		rc = passdb_errno(rc);
		goto out;
	}
	for (op = MDB_FIRST; (rc = mdb_cursor_get(cur, &k, &v, op)) == 0; op = MDB_NEXT) {
		if (k.mv_size > 0 && *(const char *)k.mv_data == '\001')
			continue;	/* the policy, not a user */
		if (n == cap) {
			cap = cap ? cap * 2 : 16;
			if ((na = reallocarray(all, cap, sizeof(*all))) == NULL) {
				rc = -ENOMEM;
				goto out;
			}
			all = na;
		}
		if ((rc = passdb_decode(&all[n], v.mv_data, v.mv_size)) < 0)
			goto out;
		n++;
	}
	rc = rc == MDB_NOTFOUND ? 0 : passdb_errno(rc);
out:
	if (cur != NULL)
		mdb_cursor_close(cur);
	mdb_txn_abort(txn);
	for (i = 0; rc == 0 && i < n; i++)
		rc = fn(&all[i], arg);
	if (all != NULL)
		explicit_bzero(all, n * sizeof(*all));
	free(all);
	return rc;
}

int
passdb_policy_get(struct passdb *db, struct passdb_policy *out)
{
	MDB_val k = { PASSDB_POLICY_LEN, (void *)PASSDB_POLICY_KEY }, v;
	MDB_txn *txn;
	struct cur c;
	int rc;

	memset(out, 0, sizeof(*out));
	if ((rc = mdb_txn_begin(db->env, NULL, MDB_RDONLY, &txn)) != 0)
		return passdb_errno(rc);
	rc = mdb_get(txn, db->dbi, &k, &v);
	if (rc == 0) {
		cur_init(&c, v.mv_data, v.mv_size);
		if (cur_u8(&c) < 1)
			c.err = 1;
		out->bad_lockout_attempts = cur_le32(&c);
		out->lockout_duration = cur_le32(&c);
		if (c.err) {
			memset(out, 0, sizeof(*out));
			rc = -EIO;
		}
	} else
		rc = rc == MDB_NOTFOUND ? 0 : passdb_errno(rc);
	mdb_txn_abort(txn);
	return rc;
}

int
passdb_policy_put(struct passdb *db, const struct passdb_policy *p)
{
	MDB_val k = { PASSDB_POLICY_LEN, (void *)PASSDB_POLICY_KEY }, v;
	uint8_t rec[9];
	MDB_txn *txn;
	int rc;

	if (db->readonly)
		return -EROFS;
	rec[0] = 1;
	le32_put(rec + 1, p->bad_lockout_attempts);
	le32_put(rec + 5, p->lockout_duration);
	v.mv_data = rec;
	v.mv_size = sizeof(rec);
	if ((rc = mdb_txn_begin(db->env, NULL, 0, &txn)) != 0)
		return passdb_errno(rc);
	if ((rc = mdb_put(txn, db->dbi, &k, &v, 0)) != 0) {
		mdb_txn_abort(txn);
		return passdb_errno(rc);
	}
	return passdb_errno(mdb_txn_commit(txn));
}

/* One user's batched failures, inside the caller's write transaction. */
static int
passdb_note_one(struct passdb *db, MDB_txn *txn, const struct passdb_failures *f)
{
	uint8_t rec[PASSDB_REC_MAX];
	char key[PASSDB_NAME_MAX];
	struct passdb_entry e;
	MDB_val k, v;
	size_t len;
	int rc;

	if (passdb_key(f->name, key, &k) < 0)
		return 0;
	rc = mdb_get(txn, db->dbi, &k, &v);
	if (rc == MDB_NOTFOUND)
		return 0;		/* deleted since: nothing to count */
	if (rc != 0)
		return passdb_errno(rc);
	if ((rc = passdb_decode(&e, v.mv_data, v.mv_size)) < 0)
		return rc;
	if (f->reset) {
		e.failed_logons = 0;
		e.locked_at = 0;
	}
	e.failed_logons = e.failed_logons + f->count < e.failed_logons ?
	    UINT32_MAX : e.failed_logons + f->count;
	if (f->locked_at != 0)
		e.locked_at = f->locked_at;
	len = passdb_encode(&e, rec, sizeof(rec));
	explicit_bzero(&e, sizeof(e));
	if (len == 0)
		return -EINVAL;
	v.mv_data = rec;
	v.mv_size = len;
	rc = passdb_errno(mdb_put(txn, db->dbi, &k, &v, 0));
	explicit_bzero(rec, sizeof(rec));
	return rc;
}

int
passdb_note_failures(struct passdb *db, const struct passdb_failures *f, size_t n)
{
	MDB_txn *txn;
	size_t i;
	int rc;

	if (db->readonly)
		return -EROFS;
	if (n == 0)
		return 0;
	if ((rc = mdb_txn_begin(db->env, NULL, 0, &txn)) != 0)
		return passdb_errno(rc);
	for (i = 0; i < n; i++)
		if ((rc = passdb_note_one(db, txn, &f[i])) < 0) {
			mdb_txn_abort(txn);
			return rc;
		}
	return passdb_errno(mdb_txn_commit(txn));
}

/*
 * Decodes one UTF-8 sequence at s; returns its length and the code point,
 * or 0 for an invalid sequence (overlong, surrogate, above U+10FFFF,
 * truncated).
 */
static size_t
passdb_utf8_next(const unsigned char *s, uint32_t *cp)
{
	uint32_t c = s[0], min;
	size_t len, i;

	if (c < 0x80) {
		*cp = c;
		return 1;
	} else if ((c & 0xe0) == 0xc0) {
		len = 2; c &= 0x1f; min = 0x80;
	} else if ((c & 0xf0) == 0xe0) {
		len = 3; c &= 0x0f; min = 0x800;
	} else if ((c & 0xf8) == 0xf0) {
		len = 4; c &= 0x07; min = 0x10000;
	} else
		return 0;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)	/* also stops at the NUL */
			return 0;
		c = c << 6 | (s[i] & 0x3f);
	}
	if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	*cp = c;
	return len;
}

int
passdb_nt_hash(const char *password, uint8_t out[16])
{
	const unsigned char *s = (const unsigned char *)password;
	uint8_t u16[256];
	size_t n = 0, len;
	uint32_t cp;
	MD4_CTX ctx;
	int rc = 0;

	MD4Init(&ctx);
	while (*s != '\0') {
		if ((len = passdb_utf8_next(s, &cp)) == 0) {
			rc = -EINVAL;
			goto out;
		}
		s += len;
		if (n + 4 > sizeof(u16)) {
			MD4Update(&ctx, u16, n);
			n = 0;
		}
		if (cp >= 0x10000) {	/* a surrogate pair */
			cp -= 0x10000;
			le16_put(u16 + n, (uint16_t)(0xd800 | cp >> 10));
			le16_put(u16 + n + 2, (uint16_t)(0xdc00 | (cp & 0x3ff)));
			n += 4;
		} else {
			le16_put(u16 + n, (uint16_t)cp);
			n += 2;
		}
	}
	MD4Update(&ctx, u16, n);
out:
	MD4Final(out, &ctx);
	explicit_bzero(u16, sizeof(u16));
	if (rc < 0)
		memset(out, 0, 16);
	return rc;
}
