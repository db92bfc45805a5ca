/*
 * Security descriptor codec (proto/secdesc.c) and POSIX ACL xattr codec
 * (vfs/acl.c).
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proto/secdesc.h"
#include "vfs/vfs.h"

/*
 * A self-relative SD built by hand from MS-DTYP 2.4.6: owner S-1-22-1-1000,
 * group S-1-22-2-100, a DACL with one ACE allowing FILE_ALL_ACCESS
 * (0x001F01FF) to S-1-1-0 with OI|CI.  Layout: header, DACL, owner, group.
 */
static const uint8_t sd_vector[] = {
	/* header: rev 1, sbz, control SELF_RELATIVE|DACL_PRESENT */
	0x01, 0x00, 0x04, 0x80,
	0x30, 0x00, 0x00, 0x00,		/* owner at 48 */
	0x40, 0x00, 0x00, 0x00,		/* group at 64 */
	0x00, 0x00, 0x00, 0x00,		/* no SACL */
	0x14, 0x00, 0x00, 0x00,		/* DACL at 20 */
	/* ACL: rev 2, sbz, size 28, count 1, sbz */
	0x02, 0x00, 0x1c, 0x00, 0x01, 0x00, 0x00, 0x00,
	/* ACE: allowed, OI|CI, size 20, mask, S-1-1-0 */
	0x00, 0x03, 0x14, 0x00, 0xff, 0x01, 0x1f, 0x00,
	0x01, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00,
	/* owner S-1-22-1-1000 */
	0x01, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x16,
	0x01, 0x00, 0x00, 0x00, 0xe8, 0x03, 0x00, 0x00,
	/* group S-1-22-2-100 */
	0x01, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x16,
	0x02, 0x00, 0x00, 0x00, 0x64, 0x00, 0x00, 0x00,
};

START_TEST(test_sd_decode_vector)
{
	struct secdesc sd;
	uint32_t id;
	char buf[64];

	ck_assert_int_eq(secdesc_decode(sd_vector, sizeof(sd_vector), &sd), 0);
	ck_assert(sd.has_owner && sd.has_group && sd.has_dacl);
	ck_assert(secdesc_sid_unix(&sd.owner, 1, &id));
	ck_assert_uint_eq(id, 1000);
	ck_assert(secdesc_sid_unix(&sd.group, 2, &id));
	ck_assert_uint_eq(id, 100);
	ck_assert(!secdesc_sid_unix(&sd.group, 1, &id));
	ck_assert_uint_eq(sd.nace, 1);
	ck_assert_uint_eq(sd.ace[0].type, ACCESS_ALLOWED_ACE_TYPE);
	ck_assert_uint_eq(sd.ace[0].flags, OBJECT_INHERIT_ACE |
	    CONTAINER_INHERIT_ACE);
	ck_assert_uint_eq(sd.ace[0].mask, 0x001F01FFu);
	ck_assert_str_eq(secdesc_sid_str(&sd.ace[0].sid, buf, sizeof(buf)),
	    "S-1-1-0");
	ck_assert_str_eq(secdesc_sid_str(&sd.owner, buf, sizeof(buf)),
	    "S-1-22-1-1000");
}
END_TEST

START_TEST(test_sd_encode_vector)
{
	struct secdesc sd;
	uint8_t out[256];
	struct wcur w;
	size_t n;

	memset(&sd, 0, sizeof(sd));
	sd.has_owner = sd.has_group = sd.has_dacl = 1;
	secdesc_sid_unix_user(&sd.owner, 1000);
	secdesc_sid_unix_group(&sd.group, 100);
	sd.nace = 1;
	sd.ace[0].type = ACCESS_ALLOWED_ACE_TYPE;
	sd.ace[0].flags = OBJECT_INHERIT_ACE | CONTAINER_INHERIT_ACE;
	sd.ace[0].mask = 0x001F01FFu;
	secdesc_sid_world(&sd.ace[0].sid);
	wcur_init(&w, out, sizeof(out));
	n = secdesc_encode(&w, &sd, OWNER_SECURITY_INFORMATION |
	    GROUP_SECURITY_INFORMATION | DACL_SECURITY_INFORMATION);
	ck_assert_int_eq(w.err, 0);
	ck_assert_uint_eq(n, sizeof(sd_vector));
	ck_assert_mem_eq(out, sd_vector, sizeof(sd_vector));
}
END_TEST

START_TEST(test_sd_encode_parts_and_short)
{
	struct secdesc sd;
	uint8_t out[256];
	struct wcur w;
	size_t n;

	ck_assert_int_eq(secdesc_decode(sd_vector, sizeof(sd_vector), &sd), 0);
	/* owner only: header + one SID */
	wcur_init(&w, out, sizeof(out));
	n = secdesc_encode(&w, &sd, OWNER_SECURITY_INFORMATION);
	ck_assert_uint_eq(n, 20 + 16);
	ck_assert_uint_eq(out[2], 0x00);	/* no DACL_PRESENT */
	ck_assert_uint_eq(out[3], 0x80);
	ck_assert_uint_eq(out[4], 20);
	/* a buffer too small: the length needed, err set */
	wcur_init(&w, out, 10);
	n = secdesc_encode(&w, &sd, DACL_SECURITY_INFORMATION);
	ck_assert_int_ne(w.err, 0);
	ck_assert_uint_eq(n, 20 + 28);
}
END_TEST

START_TEST(test_sd_decode_truncations)
{
	struct secdesc sd;
	size_t i;

	/* every truncation cuts a SID or the ACL: refused, never read past */
	for (i = 0; i < sizeof(sd_vector); i++) {
		uint8_t *copy = malloc(i ? i : 1);

		memcpy(copy, sd_vector, i);
		ck_assert_int_eq(secdesc_decode(copy, i, &sd), -1);
		free(copy);
	}
}
END_TEST

START_TEST(test_sd_decode_bad)
{
	uint8_t b[sizeof(sd_vector)];
	struct secdesc sd;

	memcpy(b, sd_vector, sizeof(b));
	b[0] = 2;				/* revision */
	ck_assert_int_eq(secdesc_decode(b, sizeof(b), &sd), -1);
	memcpy(b, sd_vector, sizeof(b));
	b[3] = 0x00;				/* not self-relative */
	ck_assert_int_eq(secdesc_decode(b, sizeof(b), &sd), -1);
	memcpy(b, sd_vector, sizeof(b));
	b[22] = 0xff;				/* ACL size past the end */
	ck_assert_int_eq(secdesc_decode(b, sizeof(b), &sd), -1);
	memcpy(b, sd_vector, sizeof(b));
	b[49] = 16;				/* owner with 16 subauthorities */
	ck_assert_int_eq(secdesc_decode(b, sizeof(b), &sd), -1);
	memcpy(b, sd_vector, sizeof(b));
	b[2] = 0x00;				/* DACL not present: ignored */
	ck_assert_int_eq(secdesc_decode(b, sizeof(b), &sd), 0);
	ck_assert_int_eq(sd.has_dacl, 0);
	/*
	 * A SecD create context with no data comes as (NULL, 0): refused
	 * without UB (fuzz_filecmd found NULL + 0 in cur_init).
	 */
	ck_assert_int_eq(secdesc_decode(NULL, 0, &sd), -1);
}
END_TEST

/*
 * A SACL-only SD (MS-DTYP 2.4.6, 2.4.5, 2.4.4.10, 2.4.4.13): control
 * SELF_RELATIVE|SACL_PRESENT|SACL_PROTECTED, the SACL at 20 holding a
 * SYSTEM_AUDIT_ACE (Everyone, success|failure, FILE_ALL_ACCESS) and a
 * SYSTEM_MANDATORY_LABEL_ACE (S-1-16-8192, NO_WRITE_UP) with 4 bytes of
 * slack past its ACEs in AclSize: kept verbatim.
 */
static const uint8_t sacl_vector[] = {
	0x01, 0x00, 0x10, 0xa0,
	0x00, 0x00, 0x00, 0x00,		/* no owner */
	0x00, 0x00, 0x00, 0x00,		/* no group */
	0x14, 0x00, 0x00, 0x00,		/* SACL at 20 */
	0x00, 0x00, 0x00, 0x00,		/* no DACL */
	/* ACL: rev 2, size 52, count 2 */
	0x02, 0x00, 0x34, 0x00, 0x02, 0x00, 0x00, 0x00,
	/* audit ACE: type 2, flags 0xc0, size 20 */
	0x02, 0xc0, 0x14, 0x00, 0xff, 0x01, 0x1f, 0x00,
	0x01, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00,
	/* label ACE: type 0x11, size 20, mask 1, S-1-16-8192 */
	0x11, 0x00, 0x14, 0x00, 0x01, 0x00, 0x00, 0x00,
	0x01, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x20, 0x00, 0x00,
	/* slack */
	0xaa, 0xbb, 0xcc, 0xdd,
};

START_TEST(test_sd_sacl_verbatim)
{
	struct secdesc sd;
	uint8_t out[256];
	struct wcur w;
	size_t n;

	ck_assert_int_eq(secdesc_decode(sacl_vector, sizeof(sacl_vector),
	    &sd), 0);
	ck_assert(!sd.has_owner && !sd.has_group && !sd.has_dacl);
	ck_assert_uint_eq(sd.sacl_len, 52);
	ck_assert_mem_eq(sd.sacl, sacl_vector + 20, 52);
	/* asked for: the same bytes */
	wcur_init(&w, out, sizeof(out));
	n = secdesc_encode(&w, &sd, SACL_SECURITY_INFORMATION);
	ck_assert_int_eq(w.err, 0);
	ck_assert_uint_eq(n, sizeof(sacl_vector));
	ck_assert_mem_eq(out, sacl_vector, sizeof(sacl_vector));
	/* not asked for: never there, nor its control bits */
	wcur_init(&w, out, sizeof(out));
	n = secdesc_encode(&w, &sd, OWNER_SECURITY_INFORMATION |
	    GROUP_SECURITY_INFORMATION | DACL_SECURITY_INFORMATION);
	ck_assert_uint_eq(n, 20);
	ck_assert_uint_eq(le16_get(out + 2), SE_SELF_RELATIVE);
	ck_assert_uint_eq(le32_get(out + 12), 0);
	/* beside a DACL, SACL first (as Windows lays them out) */
	ck_assert_int_eq(secdesc_decode(sd_vector, sizeof(sd_vector), &sd), 0);
	memcpy(sd.sacl, sacl_vector + 20, 52);
	sd.sacl_len = 52;
	sd.control |= SE_SACL_PRESENT;
	wcur_init(&w, out, sizeof(out));
	n = secdesc_encode(&w, &sd, 0xf);
	ck_assert_int_eq(w.err, 0);
	ck_assert_uint_eq(n, sizeof(sd_vector) + 52);
	ck_assert_uint_eq(le32_get(out + 12), 20);
	ck_assert_uint_eq(le32_get(out + 16), 72);
	ck_assert_mem_eq(out + 20, sacl_vector + 20, 52);
	/* a NULL SACL: present, at offset 0 */
	sd.sacl_len = 0;
	wcur_init(&w, out, sizeof(out));
	n = secdesc_encode(&w, &sd, SACL_SECURITY_INFORMATION);
	ck_assert_uint_eq(n, 20);
	ck_assert_uint_eq(le16_get(out + 2), SE_SELF_RELATIVE |
	    SE_SACL_PRESENT);
	ck_assert_uint_eq(le32_get(out + 12), 0);
}
END_TEST

START_TEST(test_sd_sacl_bad)
{
	uint8_t b[sizeof(sacl_vector)];
	struct secdesc sd;
	size_t i;

	for (i = 0; i < sizeof(sacl_vector); i++) {
		uint8_t *copy = malloc(i ? i : 1);

		memcpy(copy, sacl_vector, i);
		ck_assert_int_eq(secdesc_decode(copy, i, &sd), -1);
		free(copy);
	}
	memcpy(b, sacl_vector, sizeof(b));
	b[20] = 1;				/* ACL revision */
	ck_assert_int_eq(secdesc_decode(b, sizeof(b), &sd), -1);
	memcpy(b, sacl_vector, sizeof(b));
	b[22] = 4;				/* AclSize under its header */
	ck_assert_int_eq(secdesc_decode(b, sizeof(b), &sd), -1);
	memcpy(b, sacl_vector, sizeof(b));
	b[24] = 4;				/* more ACEs than fit */
	ck_assert_int_eq(secdesc_decode(b, sizeof(b), &sd), -1);
	memcpy(b, sacl_vector, sizeof(b));
	b[50] = 0x30;				/* an ACE past AclSize */
	ck_assert_int_eq(secdesc_decode(b, sizeof(b), &sd), -1);
	memcpy(b, sacl_vector, sizeof(b));
	b[30] = 0x02;				/* AceSize 2 */
	ck_assert_int_eq(secdesc_decode(b, sizeof(b), &sd), -1);
	memcpy(b, sacl_vector, sizeof(b));
	b[2] = 0x00;				/* not present: ignored */
	ck_assert_int_eq(secdesc_decode(b, sizeof(b), &sd), 0);
	ck_assert_uint_eq(sd.sacl_len, 0);
}
END_TEST

/* user::rw-, user:1000:r--, group::r--, mask::r--, other::--- */
static const uint8_t acl_vector[] = {
	0x02, 0x00, 0x00, 0x00,
	0x01, 0x00, 0x06, 0x00, 0xff, 0xff, 0xff, 0xff,
	0x02, 0x00, 0x04, 0x00, 0xe8, 0x03, 0x00, 0x00,
	0x04, 0x00, 0x04, 0x00, 0xff, 0xff, 0xff, 0xff,
	0x10, 0x00, 0x04, 0x00, 0xff, 0xff, 0xff, 0xff,
	0x20, 0x00, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff,
};

START_TEST(test_acl_roundtrip_sorted)
{
	struct vfs_acl acl;
	uint8_t out[128];
	size_t n;

	/* given out of order, encoded in the order the kernel requires */
	memset(&acl, 0, sizeof(acl));
	acl.n = 5;
	acl.e[0] = (struct vfs_acl_entry){ VFS_ACL_OTHER, 0, 0 };
	acl.e[1] = (struct vfs_acl_entry){ VFS_ACL_MASK, 4, 0 };
	acl.e[2] = (struct vfs_acl_entry){ VFS_ACL_USER, 4, 1000 };
	acl.e[3] = (struct vfs_acl_entry){ VFS_ACL_GROUP_OBJ, 4, 0 };
	acl.e[4] = (struct vfs_acl_entry){ VFS_ACL_USER_OBJ, 6, 0 };
	n = vfs_acl_encode(&acl, out, sizeof(out));
	ck_assert_uint_eq(n, sizeof(acl_vector));
	ck_assert_mem_eq(out, acl_vector, sizeof(acl_vector));
	ck_assert_int_eq(vfs_acl_decode(acl_vector, sizeof(acl_vector), &acl),
	    0);
	ck_assert_uint_eq(acl.n, 5);
	ck_assert_uint_eq(acl.e[1].tag, VFS_ACL_USER);
	ck_assert_uint_eq(acl.e[1].id, 1000);
	ck_assert_uint_eq(acl.e[1].perm, 4);
	/* too small a buffer: 0 */
	ck_assert_uint_eq(vfs_acl_encode(&acl, out, 10), 0);
}
END_TEST

START_TEST(test_acl_decode_bad)
{
	uint8_t b[sizeof(acl_vector)];
	struct vfs_acl acl;
	size_t i;

	memcpy(b, acl_vector, sizeof(b));
	b[0] = 1;					/* version */
	ck_assert_int_ne(vfs_acl_decode(b, sizeof(b), &acl), 0);
	memcpy(b, acl_vector, sizeof(b));
	b[4] = 0x40;					/* unknown tag */
	ck_assert_int_ne(vfs_acl_decode(b, sizeof(b), &acl), 0);
	for (i = 0; i < sizeof(acl_vector); i++)
		if ((i < 4 || (i - 4) % 8 != 0))
			ck_assert_int_ne(vfs_acl_decode(acl_vector, i, &acl),
			    0);
}
END_TEST

START_TEST(test_acl_on_a_file)
{
	const struct vfs_ops *v = &vfs_posix;
	char path[] = "/tmp/check_secdesc.XXXXXX";
	struct vfs_acl acl, back;
	struct stat st;
	int fd;

	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	acl.n = 4;
	acl.e[0] = (struct vfs_acl_entry){ VFS_ACL_OTHER, 0, 0 };
	acl.e[1] = (struct vfs_acl_entry){ VFS_ACL_USER, 4, 4242 };
	acl.e[2] = (struct vfs_acl_entry){ VFS_ACL_USER_OBJ, 6, 0 };
	acl.e[3] = (struct vfs_acl_entry){ VFS_ACL_GROUP_OBJ, 0, 0 };
	/* a named entry needs a mask: the kernel refuses the ACL without */
	ck_assert_int_eq(vfs_acl_set(v, fd, 0, &acl), -EINVAL);
	acl.e[acl.n++] = (struct vfs_acl_entry){ VFS_ACL_MASK, 4, 0 };
	ck_assert_int_eq(vfs_acl_set(v, fd, 0, &acl), 0);
	ck_assert_int_eq(vfs_acl_get(v, fd, 0, &back), 0);
	ck_assert_uint_eq(back.n, 5);
	ck_assert_uint_eq(back.e[1].tag, VFS_ACL_USER);
	ck_assert_uint_eq(back.e[1].id, 4242);
	/* the kernel keeps the mode in step: group bits = the mask */
	ck_assert_int_eq(fstat(fd, &st), 0);
	ck_assert_uint_eq(st.st_mode & 0777, 0640);
	/* removing it, twice (the second finds none: still success) */
	back.n = 0;
	ck_assert_int_eq(vfs_acl_set(v, fd, 0, &back), 0);
	ck_assert_int_eq(vfs_acl_set(v, fd, 0, &back), 0);
	ck_assert_int_eq(vfs_acl_get(v, fd, 0, &back), -ENODATA);
	close(fd);
	unlink(path);
}
END_TEST

static Suite *
secdesc_suite(void)
{
	Suite *s = suite_create("secdesc");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_sd_decode_vector);
	tcase_add_test(tc, test_sd_encode_vector);
	tcase_add_test(tc, test_sd_encode_parts_and_short);
	tcase_add_test(tc, test_sd_decode_truncations);
	tcase_add_test(tc, test_sd_decode_bad);
	tcase_add_test(tc, test_sd_sacl_verbatim);
	tcase_add_test(tc, test_sd_sacl_bad);
	tcase_add_test(tc, test_acl_roundtrip_sorted);
	tcase_add_test(tc, test_acl_decode_bad);
	tcase_add_test(tc, test_acl_on_a_file);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(secdesc_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
