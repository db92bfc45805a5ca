/*
 * Tree connects counted for `max connections` (shm/trees.c): the limit,
 * the release, share names matched in any case, a dead worker's trees
 * purged, workers racing for the last slot (real processes), and the
 * record's decoder against every truncation and a lying value.
 */
#include "shm_test.h"
#include "shm/shm_priv.h"

static uint32_t
count(struct shm *s, const char *share)
{
	uint32_t n = 99;

	ck_assert_int_eq(shm_tree_count(s, share, &n), 0);
	return n;
}

START_TEST(test_limit_and_release)
{
	struct shm *s = make_env(0);
	uint32_t n = 0;

	ck_assert_int_eq(shm_tree_claim(s, "apps", 100, 1, 2, &n), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert_int_eq(shm_tree_claim(s, "apps", 200, 1, 2, &n), 0);
	ck_assert_uint_eq(n, 2);
	/* the third, whoever asks */
	ck_assert_int_eq(shm_tree_claim(s, "apps", 300, 1, 2, &n), -EUSERS);
	ck_assert_uint_eq(n, 2);
	ck_assert_int_eq(shm_tree_claim(s, "apps", 100, 2, 2, NULL), -EUSERS);
	/* other shares are not touched: a longer name, a prefix of it */
	ck_assert_int_eq(shm_tree_claim(s, "apps2", 300, 1, 1, NULL), 0);
	ck_assert_int_eq(shm_tree_claim(s, "app", 300, 2, 1, NULL), 0);
	ck_assert_uint_eq(count(s, "apps"), 2);
	ck_assert_uint_eq(count(s, "apps2"), 1);
	ck_assert_uint_eq(count(s, "app"), 1);
	ck_assert_uint_eq(count(s, "none"), 0);
	/* a release frees a slot; releasing twice finds nothing */
	ck_assert_int_eq(shm_tree_release(s, "apps", 200, 1), 0);
	ck_assert_int_eq(shm_tree_release(s, "apps", 200, 1), -ENOENT);
	ck_assert_uint_eq(count(s, "apps"), 1);
	ck_assert_int_eq(shm_tree_claim(s, "apps", 300, 3, 2, &n), 0);
	ck_assert_uint_eq(n, 2);
	/* a limit lowered by a reload: the trees stay, new ones wait */
	ck_assert_int_eq(shm_tree_claim(s, "apps", 300, 4, 1, &n), -EUSERS);
	ck_assert_uint_eq(count(s, "apps"), 2);
	/* raised: admitted */
	ck_assert_int_eq(shm_tree_claim(s, "apps", 300, 4, 3, &n), 0);
	ck_assert_uint_eq(n, 3);
	/* one key is one tree */
	ck_assert_int_eq(shm_tree_claim(s, "apps", 300, 4, 9, NULL), -EEXIST);
	drop_env(s);
}
END_TEST

/* Share names match in any case (ASCII), as conf_share_find finds them. */
START_TEST(test_name_case)
{
	struct shm *s = make_env(0);

	ck_assert_int_eq(shm_tree_claim(s, "Apps", 100, 1, 2, NULL), 0);
	ck_assert_int_eq(shm_tree_claim(s, "APPS", 100, 2, 2, NULL), 0);
	ck_assert_int_eq(shm_tree_claim(s, "apps", 100, 3, 2, NULL), -EUSERS);
	ck_assert_uint_eq(count(s, "aPpS"), 2);
	ck_assert_int_eq(shm_tree_release(s, "apps", 100, 1), 0);
	ck_assert_uint_eq(count(s, "Apps"), 1);
	drop_env(s);
}
END_TEST

START_TEST(test_bad_args)
{
	struct shm *s = make_env(0);
	char longname[SHM_NAME_MAX + 1];
	uint32_t n;

	memset(longname, 'a', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	ck_assert_int_eq(shm_tree_claim(s, "", 100, 1, 2, NULL), -EINVAL);
	ck_assert_int_eq(shm_tree_claim(s, longname, 100, 1, 2, NULL), -EINVAL);
	ck_assert_int_eq(shm_tree_claim(s, "apps", 0, 1, 2, NULL), -EINVAL);
	ck_assert_int_eq(shm_tree_claim(s, "apps", 100, 0, 2, NULL), -EINVAL);
	ck_assert_int_eq(shm_tree_claim(s, "apps", 100, 1, 0, NULL), -EINVAL);
	ck_assert_int_eq(shm_tree_release(s, "", 100, 1), -EINVAL);
	ck_assert_int_eq(shm_tree_count(s, longname, &n), -EINVAL);
	ck_assert_uint_eq(count(s, "apps"), 0);
	drop_env(s);
}
END_TEST

static int
collect(const struct shm_tree_rec *r, void *arg)
{
	unsigned *n = arg;

	ck_assert_int_gt(r->pid, 0);
	ck_assert_uint_ne(r->tree_key, 0);
	ck_assert_uint_gt(r->since, 0);
	n[r->pid == 100 ? 0 : 1]++;
	return 0;
}

/* A dead worker's trees go in the purge; the others' stay. */
START_TEST(test_purge)
{
	struct shm *s = make_env(0);
	struct shm_purge_result pr;
	unsigned seen[2] = { 0, 0 };

	ck_assert_int_eq(shm_tree_claim(s, "apps", 100, 1, 5, NULL), 0);
	ck_assert_int_eq(shm_tree_claim(s, "apps", 100, 2, 5, NULL), 0);
	ck_assert_int_eq(shm_tree_claim(s, "data", 100, 3, 5, NULL), 0);
	/* pid 100's key bytes must not be mistaken: 0x64 in another field */
	ck_assert_int_eq(shm_tree_claim(s, "apps", 0x6400, 100, 5, NULL), 0);
	ck_assert_int_eq(shm_foreach_tree(s, collect, seen), 0);
	ck_assert_uint_eq(seen[0], 3);
	ck_assert_uint_eq(seen[1], 1);
	ck_assert_int_eq(shm_purge_worker(s, 100, &pr), 0);
	ck_assert_uint_eq(pr.trees, 3);
	ck_assert_uint_eq(count(s, "apps"), 1);
	ck_assert_uint_eq(count(s, "data"), 0);
	ck_assert_int_eq(shm_purge_worker(s, 100, &pr), 0);
	ck_assert_uint_eq(pr.trees, 0);
	ck_assert_int_eq(shm_purge_worker(s, 0x6400, &pr), 0);
	ck_assert_uint_eq(pr.trees, 1);
	ck_assert_uint_eq(count(s, "apps"), 0);
	drop_env(s);
}
END_TEST

/*
 * Eight processes want one of three slots at once: the count and the
 * insert are one transaction, so exactly three get one.
 */
#define RACERS	8
#define SLOTS	3

static void
kid_claim(struct kid *k)
{
	struct shm *s = kid_attach();
	int rc;

	(void)kid_wait(k->to[0]);	/* all start together */
	rc = shm_tree_claim(s, "apps", getpid(), 1, SLOTS, NULL);
	kid_say(k->from[1], rc);
	(void)kid_wait(k->to[0]);	/* then die holding it */
	shm_detach(s);
}

START_TEST(test_race_last_slots)
{
	struct shm *s = make_env(0);
	struct kid k[RACERS];
	int i, got = 0, full = 0, rc;

	for (i = 0; i < RACERS; i++)
		kid_start(&k[i], kid_claim);
	for (i = 0; i < RACERS; i++)
		kid_say(k[i].to[1], 1);
	for (i = 0; i < RACERS; i++) {
		rc = kid_read(&k[i]);
		if (rc == 0)
			got++;
		else if (rc == -EUSERS)
			full++;
	}
	ck_assert_int_eq(got, SLOTS);
	ck_assert_int_eq(full, RACERS - SLOTS);
	ck_assert_uint_eq(count(s, "apps"), SLOTS);
	/* killed, they hold their slots until the purge */
	for (i = 0; i < RACERS; i++) {
		kill(k[i].pid, SIGKILL);
		(void)kid_exit(&k[i]);
	}
	ck_assert_uint_eq(count(s, "apps"), SLOTS);
	for (i = 0; i < RACERS; i++)
		ck_assert_int_eq(shm_purge_worker(s, k[i].pid, NULL), 0);
	ck_assert_uint_eq(count(s, "apps"), 0);
	drop_env(s);
}
END_TEST

struct rawrec {
	uint8_t	k[64], v[64];
	size_t	kn, vn;
	int	count;	/* 1: the share's count (name | 0), 0: a tree's */
};

static int
grab_raw(const MDB_val *k, const MDB_val *v, void *arg)
{
	struct rawrec *r = arg;

	if ((k->mv_size == 5) != r->count)
		return 0;
	ck_assert_uint_le(k->mv_size, sizeof(r->k));
	ck_assert_uint_le(v->mv_size, sizeof(r->v));
	memcpy(r->k, k->mv_data, k->mv_size);
	memcpy(r->v, v->mv_data, v->mv_size);
	r->kn = k->mv_size;
	r->vn = v->mv_size;
	return 1;
}

/* The stored record decodes; every truncation and a lying value do not. */
START_TEST(test_decode)
{
	struct shm *s = make_env(0);
	struct shm_tree_rec r;
	struct rawrec raw;
	uint32_t n;
	size_t i;

	ck_assert_int_eq(shm_tree_claim(s, "Apps", 4242, 77, 5, NULL), 0);
	/* the share's count */
	memset(&raw, 0, sizeof(raw));
	raw.count = 1;
	ck_assert_int_eq(shm_rec_walk(s, shm_env_main(s), s->db_trees,
	    grab_raw, &raw), 0);
	ck_assert_mem_eq(raw.k, "apps", 5);
	ck_assert_int_eq(shm_tree_counter_decode(raw.v, raw.vn, &n), 0);
	ck_assert_uint_eq(n, 1);
	for (i = 0; i < raw.vn; i++)
		ck_assert_int_eq(shm_tree_counter_decode(raw.v, i, &n), -EPROTO);
	ck_assert_int_eq(shm_tree_counter_decode(raw.v, raw.vn + 1, &n),
	    -EPROTO);
	ck_assert_int_eq(shm_tree_decode(raw.k, raw.kn, raw.v, raw.vn, &r),
	    -EPROTO);
	/* the tree's record */
	memset(&raw, 0, sizeof(raw));
	ck_assert_int_eq(shm_rec_walk(s, shm_env_main(s), s->db_trees,
	    grab_raw, &raw), 0);
	ck_assert_int_eq(shm_tree_decode(raw.k, raw.kn, raw.v, raw.vn, &r), 0);
	ck_assert_str_eq(r.share, "apps");
	ck_assert_int_eq(r.pid, 4242);
	ck_assert_uint_eq(r.tree_key, 77);
	for (i = 0; i < raw.kn; i++)
		ck_assert_int_eq(shm_tree_decode(raw.k, i, raw.v, raw.vn, &r),
		    -EPROTO);
	for (i = 0; i < raw.vn; i++)
		ck_assert_int_eq(shm_tree_decode(raw.k, raw.kn, raw.v, i, &r),
		    -EPROTO);
	/* trailing bytes */
	ck_assert_int_eq(shm_tree_decode(raw.k, raw.kn, raw.v, raw.vn + 1, &r),
	    -EPROTO);
	/* a value naming another pid than its key */
	raw.v[1] ^= 1;
	ck_assert_int_eq(shm_tree_decode(raw.k, raw.kn, raw.v, raw.vn, &r),
	    -EPROTO);
	raw.v[1] ^= 1;
	/* another version */
	raw.v[0] = 9;
	ck_assert_int_eq(shm_tree_decode(raw.k, raw.kn, raw.v, raw.vn, &r),
	    -EPROTO);
	/* a name with no end where it should be */
	raw.v[0] = 1;
	raw.k[4] = 'x';
	ck_assert_int_eq(shm_tree_decode(raw.k, raw.kn, raw.v, raw.vn, &r),
	    -EPROTO);
	drop_env(s);
}
END_TEST

static void
add_tests(TCase *tc)
{
	tcase_add_test(tc, test_limit_and_release);
	tcase_add_test(tc, test_name_case);
	tcase_add_test(tc, test_bad_args);
	tcase_add_test(tc, test_purge);
	tcase_add_test(tc, test_race_last_slots);
	tcase_add_test(tc, test_decode);
}

int
main(void)
{
	return shm_test_run("shm_trees", add_tests);
}
