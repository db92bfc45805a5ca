/* The samr pipe's account list (worker/samr_db.h). */
#include "worker/samr_db.h"

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "proto/cur.h"

static struct samr_acct samr_users[SAMR_DB_MAX_USERS];
static unsigned samr_nusers;
static struct samr_acct samr_groups[SAMR_DB_MAX_GROUPS];
static unsigned samr_ngroups;
static int samr_groups_stale = 1;
/* NSS answers: a group with many members needs room */
static char samr_nss_buf[64 * 1024];

static int
samr_acct_cmp(const void *a, const void *b)
{
	const struct samr_acct *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

int
samr_db_set(const uint8_t *payload, size_t len)
{
	struct cur c;
	uint32_t n, i;
	unsigned k = 0;

	samr_nusers = 0;
	samr_groups_stale = 1;
	cur_init(&c, payload, len);
	n = cur_le32(&c);
	if (c.err || n > SAMR_DB_MAX_USERS)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		struct samr_acct *a = &samr_users[k];
		const uint8_t *name;
		uint8_t nlen;

		a->id = cur_le32(&c);
		a->flags = cur_le32(&c) & SAMR_DB_DISABLED;
		nlen = cur_u8(&c);
		name = cur_view(&c, nlen);
		if (c.err || nlen == 0 || nlen >= SAMR_DB_NAME_MAX)
			return -EINVAL;
		/*
		 * A name no SAM account could have (an NSS name with a '\\')
		 * is left out alone: refusing the list would list no one.
		 */
		if (memchr(name, '\0', nlen) != NULL ||
		    memchr(name, '\\', nlen) != NULL)
			continue;
		memcpy(a->name, name, nlen);
		a->name[nlen] = '\0';
		k++;
	}
	if (cur_left(&c) != 0)
		return -EINVAL;
	qsort(samr_users, k, sizeof(samr_users[0]), samr_acct_cmp);
	/* several SMB names may map to one account: list it once */
	for (i = 0, n = 0; i < k; i++) {
		if (n > 0 && samr_users[n - 1].id == samr_users[i].id) {
			/* enabled if any of its names is */
			samr_users[n - 1].flags &= samr_users[i].flags;
			continue;
		}
		samr_users[n++] = samr_users[i];
	}
	samr_nusers = n;
	return 0;
}

unsigned
samr_db_users(const struct samr_acct **out)
{
	*out = samr_users;
	return samr_nusers;
}

/* Adds gid to the group table if new and there is room. */
static void
samr_group_add(uint32_t gid)
{
	unsigned i;

	if (samr_ngroups == SAMR_DB_MAX_GROUPS)
		return;
	for (i = 0; i < samr_ngroups; i++)
		if (samr_groups[i].id == gid)
			return;
	samr_groups[samr_ngroups].id = gid;
	samr_groups[samr_ngroups].flags = 0;
	samr_groups[samr_ngroups].name[0] = '\0';
	samr_ngroups++;
}

/*
 * The primary and supplementary groups of the listed users, with the
 * names NSS gives them; a gid without a name is left out.  Looked up
 * once per user list, not per call.
 */
static void
samr_groups_load(void)
{
	struct passwd pw, *pwp;
	struct group gr, *grp;
	gid_t gids[SAMR_DB_USER_GROUPS];
	unsigned i, k;
	int n, j;

	samr_ngroups = 0;
	for (i = 0; i < samr_nusers; i++) {
		pwp = NULL;
		if (getpwuid_r((uid_t)samr_users[i].id, &pw, samr_nss_buf,
		    sizeof(samr_nss_buf), &pwp) != 0 || pwp == NULL)
			continue;
		samr_group_add((uint32_t)pw.pw_gid);
		n = SAMR_DB_USER_GROUPS;
		/* on overflow n is set to the total but gids is filled */
		if (getgrouplist(pw.pw_name, pw.pw_gid, gids, &n) < 0)
			n = SAMR_DB_USER_GROUPS;
		for (j = 0; j < n && j < SAMR_DB_USER_GROUPS; j++)
			samr_group_add((uint32_t)gids[j]);
	}
	for (i = 0, k = 0; i < samr_ngroups; i++) {
		grp = NULL;
		if (getgrgid_r((gid_t)samr_groups[i].id, &gr, samr_nss_buf,
		    sizeof(samr_nss_buf), &grp) != 0 || grp == NULL ||
		    strlen(gr.gr_name) >= SAMR_DB_NAME_MAX)
			continue;
		samr_groups[k].id = samr_groups[i].id;
		strlcpy(samr_groups[k].name, gr.gr_name, SAMR_DB_NAME_MAX);
		k++;
	}
	samr_ngroups = k;
	qsort(samr_groups, k, sizeof(samr_groups[0]), samr_acct_cmp);
	samr_groups_stale = 0;
}

unsigned
samr_db_groups(const struct samr_acct **out)
{
	if (samr_groups_stale)
		samr_groups_load();
	*out = samr_groups;
	return samr_ngroups;
}

static const struct samr_acct *
samr_find(const struct samr_acct *t, unsigned n, uint32_t id)
{
	struct samr_acct key;

	key.id = id;
	return n == 0 ? NULL : bsearch(&key, t, n, sizeof(*t), samr_acct_cmp);
}

const struct samr_acct *
samr_db_user(uint32_t uid)
{
	return samr_find(samr_users, samr_nusers, uid);
}

const struct samr_acct *
samr_db_group(uint32_t gid)
{
	const struct samr_acct *t;
	unsigned n = samr_db_groups(&t);

	return samr_find(t, n, gid);
}

static const struct samr_acct *
samr_named(const struct samr_acct *t, unsigned n, const char *name)
{
	unsigned i;

	for (i = 0; i < n; i++)
		if (strcasecmp(t[i].name, name) == 0)
			return &t[i];
	return NULL;
}

const struct samr_acct *
samr_db_user_named(const char *name)
{
	return samr_named(samr_users, samr_nusers, name);
}

const struct samr_acct *
samr_db_group_named(const char *name)
{
	const struct samr_acct *t;
	unsigned n = samr_db_groups(&t);

	return samr_named(t, n, name);
}
