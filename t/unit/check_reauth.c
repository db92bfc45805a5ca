/*
 * Re-authentication as another identity (worker/smb2_reauth.c): which
 * requests of a session marked reauth_other still run on what it holds,
 * and which need new authority and are refused, truncated bodies
 * included.
 */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proto/cur.h"
#include "proto/smb2.h"
#include "worker/conn_priv.h"
#include "worker/dispatch.h"
#include "worker/smb2.h"

static struct conn_private pv;
static struct conn conn;
static struct session sess;
static uint8_t body[64];

/* The status of command with the first n bytes of body. */
static ntstatus_t
act(uint16_t command, size_t n)
{
	struct smb2_req req;

	memset(&req, 0, sizeof(req));
	conn.priv = &pv;
	req.conn = &conn;
	req.sess = &sess;
	cur_init(&req.body, body, n);
	return smb2_session_may_act(&req, command);
}

/* A SET_INFO body (MS-SMB2 2.2.39) of InfoType type, class, secinfo. */
static void
setinfo(uint8_t type, uint8_t cls, uint32_t secinfo)
{
	memset(body, 0, sizeof(body));
	body[0] = 33;
	body[2] = type;
	body[3] = cls;
	memcpy(body + 12, &secinfo, 4);	/* little-endian host in CI */
}

/* An IOCTL body (2.2.31) of CtlCode code. */
static void
ioctl_code(uint32_t code)
{
	memset(body, 0, sizeof(body));
	body[0] = 57;
	memcpy(body + 4, &code, 4);
}

START_TEST(test_unmarked)
{
	memset(&sess, 0, sizeof(sess));
	memset(body, 0, sizeof(body));
	ck_assert_uint_eq(act(SMB2_CREATE, 57), STATUS_SUCCESS);
	ck_assert_uint_eq(act(SMB2_TREE_CONNECT, 9), STATUS_SUCCESS);
	setinfo(3, 0, 1);
	ck_assert_uint_eq(act(SMB2_SET_INFO, 32), STATUS_SUCCESS);
}
END_TEST

START_TEST(test_marked)
{
	static const uint16_t as_before[] = { SMB2_READ, SMB2_WRITE,
	    SMB2_LOCK, SMB2_FLUSH, SMB2_CLOSE, SMB2_QUERY_INFO,
	    SMB2_QUERY_DIRECTORY, SMB2_CHANGE_NOTIFY, SMB2_OPLOCK_BREAK,
	    SMB2_LOGOFF, SMB2_TREE_DISCONNECT, SMB2_ECHO, SMB2_CANCEL,
	    SMB2_SESSION_SETUP };
	size_t i;

	memset(&sess, 0, sizeof(sess));
	sess.reauth_other = 1;
	memset(body, 0, sizeof(body));
	ck_assert_uint_eq(act(SMB2_CREATE, 57), STATUS_ACCESS_DENIED);
	ck_assert_uint_eq(act(SMB2_TREE_CONNECT, 9), STATUS_ACCESS_DENIED);
	for (i = 0; i < sizeof(as_before) / sizeof(as_before[0]); i++)
		ck_assert_uint_eq(act(as_before[i], 48), STATUS_SUCCESS);
	/* SET_INFO: what the handle's access decides runs */
	setinfo(1, 4, 0);		/* FileBasicInformation */
	ck_assert_uint_eq(act(SMB2_SET_INFO, 32), STATUS_SUCCESS);
	setinfo(1, 20, 0);		/* FileEndOfFileInformation */
	ck_assert_uint_eq(act(SMB2_SET_INFO, 32), STATUS_SUCCESS);
	setinfo(3, 0, 0x4);		/* a DACL: WRITE_DAC on the handle */
	ck_assert_uint_eq(act(SMB2_SET_INFO, 32), STATUS_SUCCESS);
	setinfo(3, 0, 0x80000004u);	/* ... protected */
	ck_assert_uint_eq(act(SMB2_SET_INFO, 32), STATUS_SUCCESS);
	/* ... and what needs the new identity's authority does not */
	setinfo(1, 10, 0);		/* rename */
	ck_assert_uint_eq(act(SMB2_SET_INFO, 32), STATUS_ACCESS_DENIED);
	setinfo(1, 11, 0);		/* hard link */
	ck_assert_uint_eq(act(SMB2_SET_INFO, 32), STATUS_ACCESS_DENIED);
	setinfo(1, 65, 0);		/* rename (Ex) */
	ck_assert_uint_eq(act(SMB2_SET_INFO, 32), STATUS_ACCESS_DENIED);
	setinfo(3, 0, 0x1);		/* owner */
	ck_assert_uint_eq(act(SMB2_SET_INFO, 32), STATUS_ACCESS_DENIED);
	setinfo(3, 0, 0x5);		/* owner + DACL */
	ck_assert_uint_eq(act(SMB2_SET_INFO, 32), STATUS_ACCESS_DENIED);
	setinfo(3, 0, 0x8);		/* SACL */
	ck_assert_uint_eq(act(SMB2_SET_INFO, 32), STATUS_ACCESS_DENIED);
	setinfo(4, 0, 0);		/* quota */
	ck_assert_uint_eq(act(SMB2_SET_INFO, 32), STATUS_ACCESS_DENIED);
	/* IOCTL: server-side copy needs more than this session's handle */
	ioctl_code(0x001440F2u);
	ck_assert_uint_eq(act(SMB2_IOCTL, 56), STATUS_ACCESS_DENIED);
	ioctl_code(0x001480F2u);
	ck_assert_uint_eq(act(SMB2_IOCTL, 56), STATUS_ACCESS_DENIED);
	ioctl_code(0x0011C017u);	/* FSCTL_PIPE_TRANSCEIVE */
	ck_assert_uint_eq(act(SMB2_IOCTL, 56), STATUS_SUCCESS);
}
END_TEST

/* A body too short to say what it does is refused, never read past. */
START_TEST(test_truncated)
{
	size_t n;

	memset(&sess, 0, sizeof(sess));
	sess.reauth_other = 1;
	setinfo(3, 0, 0x4);
	ck_assert_uint_eq(act(SMB2_SET_INFO, 16), STATUS_SUCCESS);
	for (n = 0; n < 16; n++)
		ck_assert_uint_eq(act(SMB2_SET_INFO, n), STATUS_ACCESS_DENIED);
	setinfo(1, 4, 0);
	for (n = 0; n < 4; n++)
		ck_assert_uint_eq(act(SMB2_SET_INFO, n), STATUS_ACCESS_DENIED);
	ck_assert_uint_eq(act(SMB2_SET_INFO, 4), STATUS_SUCCESS);
	ioctl_code(0x0011C017u);
	for (n = 0; n < 8; n++)
		ck_assert_uint_eq(act(SMB2_IOCTL, n), STATUS_ACCESS_DENIED);
	ck_assert_uint_eq(act(SMB2_IOCTL, 8), STATUS_SUCCESS);
}
END_TEST

static Suite *
reauth_suite(void)
{
	Suite *s = suite_create("reauth");
	TCase *tc = tcase_create("authority");

	tcase_add_test(tc, test_unmarked);
	tcase_add_test(tc, test_marked);
	tcase_add_test(tc, test_truncated);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(reauth_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
