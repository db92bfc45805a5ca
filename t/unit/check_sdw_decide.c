/*
 * The descriptor writer's decision (worker/sdw_decide.c), asked by the
 * caller a compromised worker is: any uid the kernel gave it, any bytes,
 * any SECURITY_INFORMATION.  Each test states the rule of worker/sdw.c's
 * threat model it holds the writer to.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "proto/cur.h"
#include "proto/ntacl.h"
#include "proto/secdesc.h"
#include "worker/sdw.h"
#include "worker/sdw_decide.h"

#define ALICE	1001
#define BOB	1002
#define STAFF	100
#define OGD	(OWNER_SECURITY_INFORMATION | GROUP_SECURITY_INFORMATION | \
	DACL_SECURITY_INFORMATION)

static struct secdesc sd, got;
static uint8_t stored[SDW_SD_MAX], newb[SDW_SD_MAX], out[SDW_SD_MAX];
static size_t stored_len, newb_len;
static const uint32_t staff = STAFF;

/* a descriptor owned by owner, group STAFF, with the ACEs added below */
static void
sd_init(uint32_t owner)
{
	memset(&sd, 0, sizeof(sd));
	sd.control = SE_SELF_RELATIVE | SE_DACL_PRESENT;
	sd.has_owner = sd.has_group = sd.has_dacl = 1;
	secdesc_sid_unix_user(&sd.owner, owner);
	secdesc_sid_unix_group(&sd.group, STAFF);
}

static void
sd_allow(uint32_t uid, uint32_t mask)
{
	struct secdesc_ace *a = &sd.ace[sd.nace++];

	a->type = ACCESS_ALLOWED_ACE_TYPE;
	a->flags = 0;
	a->mask = mask;
	secdesc_sid_unix_user(&a->sid, uid);
}

static size_t
sd_encode(uint8_t *buf, uint32_t which)
{
	struct wcur w;

	wcur_init(&w, buf, SDW_SD_MAX);
	(void)secdesc_encode(&w, &sd, which);
	ck_assert(!w.err);
	return wcur_off(&w);
}

static void
caller(struct sdw_caller *c, uint32_t uid, int security)
{
	memset(c, 0, sizeof(*c));
	c->uid = uid;
	c->gid = uid;
	c->ngroups = 1;
	c->groups = &staff;
	c->security = security;
}

/* a file of owner, with `stored` as its descriptor when have */
static void
target(struct sdw_target *t, uint32_t owner, int have)
{
	memset(t, 0, sizeof(*t));
	t->owner_uid = owner;
	t->stored = have ? stored : NULL;
	t->stored_len = have ? stored_len : 0;
}

static ntstatus_t
ask(const struct sdw_caller *c, const struct sdw_target *t, uint32_t which,
    size_t *outlen)
{
	return sdw_decide(c, t, which, newb, newb_len, out, sizeof(out),
	    outlen);
}

START_TEST(test_owner_sets_dacl)
{
	struct sdw_caller c;
	struct sdw_target t;
	size_t n;

	sd_init(ALICE);
	sd_allow(ALICE, 0x1f01ff);
	sd_allow(BOB, 0x1);
	newb_len = sd_encode(newb, OGD);
	caller(&c, ALICE, 0);
	target(&t, ALICE, 0);
	ck_assert_uint_eq(ask(&c, &t, DACL_SECURITY_INFORMATION, &n),
	    STATUS_SUCCESS);
	/* nothing was stored: owner and group come along from the request */
	ck_assert_uint_gt(n, 0);
	ck_assert_int_eq(secdesc_decode(out, n, &got), 0);
	ck_assert(got.has_owner && got.has_group);
	ck_assert_uint_eq(got.nace, 2);
	ck_assert_uint_eq(got.ace[1].mask, 0x1);
}
END_TEST

START_TEST(test_other_never_sets_dacl)
{
	struct sdw_caller c;
	struct sdw_target t;
	size_t n = 99;

	/* bob is given every right by alice's stored DACL */
	sd_init(ALICE);
	sd_allow(BOB, 0x1f01ff);
	stored_len = sd_encode(stored, OGD);
	sd_init(ALICE);
	sd_allow(BOB, 0x1f01ff);
	sd_allow(ALICE, 0);
	newb_len = sd_encode(newb, OGD);
	caller(&c, BOB, 0);
	target(&t, ALICE, 1);
	/* the kernel would not let him change the POSIX ACL beside it */
	ck_assert_uint_eq(ask(&c, &t, DACL_SECURITY_INFORMATION, &n),
	    STATUS_ACCESS_DENIED);
	ck_assert_uint_eq(n, 0);
	/* nor without a stored descriptor, which would be derived */
	target(&t, ALICE, 0);
	ck_assert_uint_eq(ask(&c, &t, OWNER_SECURITY_INFORMATION, &n),
	    STATUS_ACCESS_DENIED);
}
END_TEST

START_TEST(test_write_owner_takes_ownership)
{
	struct sdw_caller c;
	struct sdw_target t;
	struct secdesc_sid s;
	size_t n;

	sd_init(ALICE);
	sd_allow(BOB, NTACL_WRITE_OWNER);
	stored_len = sd_encode(stored, OGD);
	caller(&c, BOB, 0);
	target(&t, ALICE, 1);
	/* to himself: yes */
	sd_init(BOB);
	newb_len = sd_encode(newb, OWNER_SECURITY_INFORMATION);
	ck_assert_uint_eq(ask(&c, &t, OWNER_SECURITY_INFORMATION, &n),
	    STATUS_SUCCESS);
	ck_assert_int_eq(secdesc_decode(out, n, &got), 0);
	secdesc_sid_unix_user(&s, BOB);
	ck_assert_int_eq(memcmp(&got.owner, &s, sizeof(s)), 0);
	/* the DACL stays alice's */
	ck_assert_uint_eq(got.nace, 1);
	ck_assert_uint_eq(got.ace[0].mask, NTACL_WRITE_OWNER);
	/* to a third user he does not hold: INVALID_OWNER */
	sd_init(1003);
	newb_len = sd_encode(newb, OWNER_SECURITY_INFORMATION);
	ck_assert_uint_eq(ask(&c, &t, OWNER_SECURITY_INFORMATION, &n),
	    STATUS_INVALID_OWNER);
	/* the owner too may give a file only to a SID of its token */
	caller(&c, ALICE, 0);
	ck_assert_uint_eq(ask(&c, &t, OWNER_SECURITY_INFORMATION, &n),
	    STATUS_INVALID_OWNER);
	/* without WRITE_OWNER in the stored DACL bob gets nothing */
	sd_init(ALICE);
	sd_allow(BOB, 0x1);
	stored_len = sd_encode(stored, OGD);
	sd_init(BOB);
	newb_len = sd_encode(newb, OWNER_SECURITY_INFORMATION);
	caller(&c, BOB, 0);
	target(&t, ALICE, 1);
	ck_assert_uint_eq(ask(&c, &t, OWNER_SECURITY_INFORMATION, &n),
	    STATUS_ACCESS_DENIED);
}
END_TEST

START_TEST(test_sacl_needs_privilege)
{
	struct sdw_caller c;
	struct sdw_target t;
	size_t n;

	sd_init(ALICE);
	sd.control |= SE_SACL_PRESENT;
	newb_len = sd_encode(newb, SACL_SECURITY_INFORMATION);
	caller(&c, ALICE, 0);
	target(&t, ALICE, 0);
	/* even the owner's own file */
	ck_assert_uint_eq(ask(&c, &t, SACL_SECURITY_INFORMATION, &n),
	    STATUS_PRIVILEGE_NOT_HELD);
	ck_assert_uint_eq(ask(&c, &t, SCOPE_SECURITY_INFORMATION, &n),
	    STATUS_PRIVILEGE_NOT_HELD);
	caller(&c, BOB, 1);
	ck_assert_uint_eq(ask(&c, &t, SACL_SECURITY_INFORMATION, &n),
	    STATUS_SUCCESS);
}
END_TEST

START_TEST(test_inherit_only_the_parents_sacl)
{
	struct sdw_caller c;
	struct sdw_target t;
	size_t n;

	/* a parent with nothing stored passes on no SACL ... */
	sd_init(ALICE);
	sd.control |= SE_SACL_PRESENT;
	sd.sacl_len = 8;
	memcpy(sd.sacl, "\x02\x00\x08\x00\x00\x00\x00\x00", 8);
	newb_len = sd_encode(newb, SACL_SECURITY_INFORMATION);
	caller(&c, ALICE, 0);
	target(&t, ALICE, 0);
	t.inherit = 1;
	/* ... so a SACL claimed to be inherited is a lie */
	ck_assert_uint_eq(ask(&c, &t, SACL_SECURITY_INFORMATION, &n),
	    STATUS_INVALID_SECURITY_DESCR);
	/* only on a file the caller owns, only the SACL */
	target(&t, BOB, 0);
	t.inherit = 1;
	ck_assert_uint_eq(ask(&c, &t, SACL_SECURITY_INFORMATION, &n),
	    STATUS_ACCESS_DENIED);
	target(&t, ALICE, 0);
	t.inherit = 1;
	ck_assert_uint_eq(ask(&c, &t, DACL_SECURITY_INFORMATION, &n),
	    STATUS_ACCESS_DENIED);
	/* a parent that could not be read: its error, nothing stored */
	target(&t, ALICE, 0);
	t.inherit = 1;
	t.parent_err = STATUS_ACCESS_DENIED;
	n = 99;
	ck_assert_uint_eq(ask(&c, &t, SACL_SECURITY_INFORMATION, &n),
	    STATUS_ACCESS_DENIED);
	ck_assert_uint_eq(n, 0);
}
END_TEST

START_TEST(test_hostile_bytes)
{
	struct sdw_caller c;
	struct sdw_target t;
	size_t n, i;

	caller(&c, ALICE, 1);
	target(&t, ALICE, 0);
	/* no SECURITY_INFORMATION, or an unknown bit */
	sd_init(ALICE);
	newb_len = sd_encode(newb, OGD);
	ck_assert_uint_eq(ask(&c, &t, 0, &n), STATUS_INVALID_PARAMETER);
	ck_assert_uint_eq(ask(&c, &t, BACKUP_SECURITY_INFORMATION, &n),
	    STATUS_INVALID_PARAMETER);
	ck_assert_uint_eq(ask(&c, &t, 0x80000000u | OGD, &n),
	    STATUS_INVALID_PARAMETER);
	/* every truncation of a good descriptor: a clean refusal */
	for (i = 0; i < newb_len; i++) {
		n = 99;
		ck_assert_uint_eq(sdw_decide(&c, &t, OGD, newb, i, out,
		    sizeof(out), &n), STATUS_INVALID_SECURITY_DESCR);
		ck_assert_uint_eq(n, 0);
	}
	/* a stored descriptor that does not decode is not overwritten */
	memset(stored, 0xff, 64);
	stored_len = 64;
	target(&t, ALICE, 1);
	ck_assert_uint_eq(ask(&c, &t, DACL_SECURITY_INFORMATION, &n),
	    STATUS_INVALID_SECURITY_DESCR);
	/* the stored one unreadable: refused, whatever is asked */
	target(&t, ALICE, 0);
	t.stored_err = STATUS_ACCESS_DENIED;
	ck_assert_uint_eq(ask(&c, &t, DACL_SECURITY_INFORMATION, &n),
	    STATUS_ACCESS_DENIED);
	/* an output buffer too small: refused, not overrun */
	target(&t, ALICE, 0);
	ck_assert_uint_eq(sdw_decide(&c, &t, OGD, newb, newb_len, out, 16,
	    &n), STATUS_INVALID_SECURITY_DESCR);
	ck_assert_uint_eq(n, 0);
	/* more groups than a token holds: cut, not overrun */
	{
		static uint32_t many[4096];

		for (i = 0; i < 4096; i++)
			many[i] = (uint32_t)i;
		c.groups = many;
		c.ngroups = 4096;
		ck_assert_uint_eq(ask(&c, &t, OGD, &n), STATUS_SUCCESS);
	}
}
END_TEST

START_TEST(test_nothing_brought_stores_nothing)
{
	struct sdw_caller c;
	struct sdw_target t;
	size_t n = 99;

	/* a label-class set with an empty SACL on a file with nothing */
	memset(&sd, 0, sizeof(sd));
	sd.control = SE_SELF_RELATIVE;
	newb_len = sd_encode(newb, LABEL_SECURITY_INFORMATION);
	caller(&c, ALICE, 0);
	target(&t, ALICE, 0);
	ck_assert_uint_eq(ask(&c, &t, LABEL_SECURITY_INFORMATION, &n),
	    STATUS_SUCCESS);
	ck_assert_uint_eq(n, 0);
}
END_TEST

static Suite *
sdw_decide_suite(void)
{
	Suite *s = suite_create("sdw_decide");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_owner_sets_dacl);
	tcase_add_test(tc, test_other_never_sets_dacl);
	tcase_add_test(tc, test_write_owner_takes_ownership);
	tcase_add_test(tc, test_sacl_needs_privilege);
	tcase_add_test(tc, test_inherit_only_the_parents_sacl);
	tcase_add_test(tc, test_hostile_bytes);
	tcase_add_test(tc, test_nothing_brought_stores_nothing);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(sdw_decide_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
