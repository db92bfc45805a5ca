/*
 * libFuzzer target: security descriptors from SET_INFO (proto/secdesc.c)
 * and POSIX ACL xattr values (vfs/acl.c).  A descriptor that decodes must
 * encode again, and its encoding must decode to the same parts (the SACL
 * to the same bytes); the NT
 * access check, inheritance and set merge (proto/ntacl.c, the SACL's in
 * proto/ntacl_sacl.c) run over it and what they make must encode too
 * (and a SACL they make decode again).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proto/ntacl.h"
#include "proto/secdesc.h"
#include "vfs/vfs.h"

static struct secdesc sd, sd2, sd3;
static uint8_t out[65536];

/* A SACL made here (inherited, merged, selected) must decode again. */
static void
sacl_roundtrip(const struct secdesc *d, uint32_t which)
{
	static struct secdesc back;
	struct wcur w;
	size_t n;

	wcur_init(&w, out, sizeof(out));
	n = secdesc_encode(&w, d, which);
	if (w.err || secdesc_decode(out, n, &back) != 0)
		abort();
}

/* SACL inheritance (proto/ntacl_sacl.c) and the label/attribute/scope
 * classes, from the decoded descriptor as parent and as given SACL. */
static void
ntacl_fuzz_sacl(const struct ntacl_token *t)
{
	int dir;

	for (dir = 0; dir < 2; dir++) {
		memset(&sd3, 0, sizeof(sd3));
		sd3.control = SE_SELF_RELATIVE;
		if (ntacl_sacl_inherit(&sd, dir, t, dir ? &sd2 : NULL,
		    &sd3) >= 0)
			sacl_roundtrip(&sd3, SACL_SECURITY_INFORMATION);
	}
	sacl_roundtrip(&sd, SACL_CLASS_BITS);
	if (ntacl_merge(&sd2, &sd, LABEL_SECURITY_INFORMATION |
	    SCOPE_SECURITY_INFORMATION, &sd3) == 0)
		sacl_roundtrip(&sd3, SACL_SECURITY_INFORMATION);
}

static void
ntacl_fuzz_more(void)
{
	struct ntacl_token t;
	uint32_t gid = 100, got;
	struct wcur w;

	ntacl_token_unix(&t, 1000, 1000, &gid, 1);
	(void)ntacl_granted(&sd, &t);
	(void)ntacl_check(&sd, &t, NTACL_MAXIMUM_ALLOWED | 0x1, &got);
	(void)ntacl_validate(&sd);
	ntacl_canon_set(&sd2);
	if (ntacl_merge(&sd, &sd2, DACL_SECURITY_INFORMATION |
	    SACL_SECURITY_INFORMATION, &sd3) != 0)
		abort();
	if (ntacl_inherit(&sd, 1, &t, &sd3) > 0) {
		wcur_init(&w, out, sizeof(out));
		(void)secdesc_encode(&w, &sd3, DACL_SECURITY_INFORMATION |
		    OWNER_SECURITY_INFORMATION);
		if (w.err)
			abort();
	}
	ntacl_fuzz_sacl(&t);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vfs_acl acl;
	struct wcur w;
	size_t n;

	if (secdesc_decode(data, size, &sd) == 0) {
		wcur_init(&w, out, sizeof(out));
		n = secdesc_encode(&w, &sd, OWNER_SECURITY_INFORMATION |
		    GROUP_SECURITY_INFORMATION | DACL_SECURITY_INFORMATION |
		    SACL_SECURITY_INFORMATION);
		if (w.err || n != wcur_off(&w))
			abort();
		/* the SACL comes back byte for byte */
		if (secdesc_decode(out, n, &sd2) != 0 ||
		    sd2.nace != sd.nace || sd2.has_owner != sd.has_owner ||
		    sd2.has_group != sd.has_group ||
		    sd2.sacl_len != sd.sacl_len ||
		    memcmp(sd2.sacl, sd.sacl, sd.sacl_len) != 0)
			abort();
		if (sd.has_owner && !secdesc_sid_equal(&sd.owner, &sd2.owner))
			abort();
		ntacl_fuzz_more();
	}
	if (vfs_acl_decode(data, size, &acl) == 0) {
		n = vfs_acl_encode(&acl, out, sizeof(out));
		if (n != size)
			abort();
	}
	return 0;
}
