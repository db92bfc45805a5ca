/*
 * libFuzzer target: the descriptor writer's decision (worker/sdw_decide.c)
 * with every input a compromised worker chooses: SECURITY_INFORMATION,
 * the descriptor, and which of its files it points at (owned or not, a
 * stored descriptor and a parent's of any bytes, since a file system
 * image or an earlier bug could hold anything).  Beside "no crash", the
 * rules of worker/sdw.c's threat model are checked on every answer:
 *   - what is to be stored decodes, and fits;
 *   - a caller that is not the file's owner never changes its DACL;
 *   - without SeSecurityPrivilege the SACL changes only as inherited,
 *     and only on the caller's own file (labels and resource attributes
 *     aside);
 *   - an error stores nothing.
 *
 * Input: u8 flags (1 owner, 2 privilege, 4 inherit, 8 directory, 16 a
 * stored descriptor, 32 a parent's), u32 which, u16 stored length, u16
 * parent length, the stored bytes, the parent's, then the descriptor.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proto/cur.h"
#include "proto/ntacl.h"
#include "proto/secdesc.h"
#include "worker/sdw.h"
#include "worker/sdw_decide.h"

#define CALLER	1001
#define OTHER	1002

static struct secdesc before, after;
static uint8_t out[SDW_SD_MAX];

static int
same_dacl(const struct secdesc *a, const struct secdesc *b)
{
	unsigned i;

	if ((a->control & SE_DACL_PRESENT) != (b->control & SE_DACL_PRESENT) ||
	    a->nace != b->nace)
		return 0;
	for (i = 0; i < a->nace; i++)
		if (a->ace[i].type != b->ace[i].type ||
		    a->ace[i].flags != b->ace[i].flags ||
		    a->ace[i].mask != b->ace[i].mask ||
		    !secdesc_sid_equal(&a->ace[i].sid, &b->ace[i].sid))
			return 0;
	return 1;
}

static int
same_sacl(const struct secdesc *a, const struct secdesc *b)
{
	return (a->control & SE_SACL_PRESENT) == (b->control & SE_SACL_PRESENT) &&
	    a->sacl_len == b->sacl_len &&
	    memcmp(a->sacl, b->sacl, a->sacl_len) == 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint32_t groups[2] = { 100, 200 };
	struct sdw_caller c;
	struct sdw_target t;
	uint32_t which;
	size_t sl, pl, outlen = 99;
	ntstatus_t st;
	uint8_t f;
	int had;

	if (size < 9)
		return 0;
	f = data[0];
	which = le32_get(data + 1);
	sl = le16_get(data + 5);
	pl = le16_get(data + 7);
	data += 9;
	size -= 9;
	if (sl > size || pl > size - sl)
		return 0;
	memset(&c, 0, sizeof(c));
	c.uid = CALLER;
	c.gid = CALLER;
	c.groups = groups;
	c.ngroups = 2;
	c.security = (f & 2) != 0;
	memset(&t, 0, sizeof(t));
	t.owner_uid = (f & 1) ? CALLER : OTHER;
	t.is_dir = (f & 8) != 0;
	t.inherit = (f & 4) != 0;
	if (f & 16) {
		t.stored = data;
		t.stored_len = sl;
	}
	if (f & 32) {
		t.parent = data + sl;
		t.parent_len = pl;
	}
	st = sdw_decide(&c, &t, which, data + sl + pl, size - sl - pl, out,
	    sizeof(out), &outlen);
	if (st != STATUS_SUCCESS) {
		if (outlen != 0)
			abort();
		return 0;
	}
	if (outlen == 0)
		return 0;
	if (outlen > sizeof(out) || secdesc_decode(out, outlen, &after) != 0)
		abort();
	had = t.stored != NULL && secdesc_decode(t.stored, t.stored_len,
	    &before) == 0;
	if (!had) {
		memset(&before, 0, sizeof(before));
		before.control = SE_SELF_RELATIVE;
	}
	/* the kernel's rule: only the owner changes the POSIX ACL, so the DACL */
	if (t.owner_uid != CALLER && had && !same_dacl(&before, &after))
		abort();
	/* nothing stored: no DACL under which another may act */
	if (t.owner_uid != CALLER && !had && !c.security)
		abort();
	/*
	 * The SACL itself: SeSecurityPrivilege, or the parent's inheritable
	 * one on one's own file (labels and resource attributes, also kept
	 * in the SACL, have rules of their own)
	 */
	if (!c.security && !(which & SACL_CLASS_BITS) &&
	    !same_sacl(&before, &after) && !(t.inherit &&
	    t.owner_uid == CALLER))
		abort();
	return 0;
}
