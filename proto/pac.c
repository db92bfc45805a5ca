/*
 * PAC_LOGON_INFO's group memberships (MS-PAC 2.5, NDR per MS-RPCE 2.2.5
 * and 2.2.6).  proto/pac.h says what is kept and why.
 */
#include "proto/pac.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "proto/cur.h"
#include "proto/ndr.h"

/* RPC_UNICODE_STRING (MS-DTYP 2.3.10): its header in the fixed part. */
struct pac_ustr {
	uint16_t	 len;		/* bytes */
	uint16_t	 max;
	uint32_t	 ptr;
};

static void
pac_ustr_hdr(struct cur *c, struct pac_ustr *u)
{
	u->len = ndr_u16(c);
	u->max = ndr_u16(c);
	u->ptr = ndr_ptr(c);
}

/*
 * The deferred buffer of u ([size_is(max/2), length_is(len/2)] WCHAR*):
 * skipped, its counts checked against the header.
 */
static void
pac_ustr_skip(struct cur *c, const struct pac_ustr *u)
{
	uint32_t max, off, act;

	if (u->ptr == 0)
		return;
	max = ndr_u32(c);
	off = ndr_u32(c);
	act = ndr_u32(c);
	if (off != 0 || act > max || act > 0x7fff || act * 2 != u->len)
		c->err = 1;
	cur_skip(c, (size_t)act * 2);
}

/* RPC_SID (MS-DTYP 2.4.2.3), the pointee of a PISID, as "S-1-...". */
static void
pac_sid(struct cur *c, char *out, size_t cap)
{
	uint32_t conf = ndr_u32(c), sub;
	uint64_t auth = 0;
	uint8_t rev, n;
	size_t k;
	int i;

	rev = cur_u8(c);
	n = cur_u8(c);
	for (i = 0; i < 6; i++)
		auth = auth << 8 | cur_u8(c);
	if (rev != 1 || n != conf || n > 15) {
		c->err = 1;
		return;
	}
	k = (size_t)snprintf(out, cap, "S-1-%llu", (unsigned long long)auth);
	for (i = 0; i < n && !c->err; i++) {
		sub = cur_le32(c);
		if (k < cap)
			k += (size_t)snprintf(out + k, cap - k, "-%u", sub);
	}
	if (k >= cap)
		c->err = 1;
}

int
pac_logon_groups(const uint8_t *p, size_t len, struct pac_groups *out)
{
	struct pac_ustr s[6], server, domain;
	uint32_t groups_ptr, domain_ptr, obj_len, max, rid, i;
	struct cur h, c;

	memset(out, 0, sizeof(*out));
	/* MS-RPCE 2.2.6.1 common header, 2.2.6.2 private header. */
	cur_init(&h, p, len);
	if (cur_u8(&h) != 1 || cur_u8(&h) != 0x10 || cur_le16(&h) != 8)
		return -EBADMSG;
	cur_skip(&h, 4);
	obj_len = cur_le32(&h);
	cur_skip(&h, 4);
	if (h.err || obj_len > cur_left(&h))
		return -EBADMSG;
	/* Alignment counts from here (16 bytes in: 8-aligned either way). */
	cur_init(&c, h.p, obj_len);
	if (ndr_ptr(&c) == 0)
		return -EBADMSG;
	cur_skip(&c, 6 * 8);		/* LogonTime .. PasswordMustChange */
	for (i = 0; i < 6; i++)		/* EffectiveName .. HomeDirectoryDrive */
		pac_ustr_hdr(&c, &s[i]);
	(void)ndr_u16(&c);		/* LogonCount */
	(void)ndr_u16(&c);		/* BadPasswordCount */
	out->user_rid = ndr_u32(&c);
	out->primary_rid = ndr_u32(&c);
	out->n_groups = ndr_u32(&c);
	groups_ptr = ndr_ptr(&c);
	(void)ndr_u32(&c);		/* UserFlags */
	cur_skip(&c, 16);		/* UserSessionKey */
	pac_ustr_hdr(&c, &server);
	pac_ustr_hdr(&c, &domain);
	domain_ptr = ndr_ptr(&c);
	/* Reserved1[2], UserAccountControl, SubAuthStatus, two FILETIMEs,
	 * FailedILogonCount, Reserved3 */
	cur_skip(&c, 4 * 4 + 2 * 8 + 2 * 4);
	out->n_extra_sids = ndr_u32(&c);
	/* ExtraSids, ResourceGroupDomainSid, ResourceGroupCount,
	 * ResourceGroupIds: not read further */
	cur_skip(&c, 4 * 4);
	/* The deferred referents, in the order of their pointers. */
	for (i = 0; i < 6; i++)
		pac_ustr_skip(&c, &s[i]);
	if (groups_ptr != 0) {
		max = ndr_u32(&c);
		if (max != out->n_groups || max > cur_left(&c) / 8)
			return -EBADMSG;
		for (i = 0; i < max && !c.err; i++) {
			rid = cur_le32(&c);
			cur_skip(&c, 4);	/* Attributes */
			if (out->n_rids < PAC_MAX_RIDS)
				out->rids[out->n_rids++] = rid;
		}
	} else if (out->n_groups != 0)
		return -EBADMSG;
	pac_ustr_skip(&c, &server);
	pac_ustr_skip(&c, &domain);
	if (domain_ptr != 0)
		pac_sid(&c, out->domain, sizeof(out->domain));
	if (c.err) {
		memset(out, 0, sizeof(*out));
		return -EBADMSG;
	}
	return 0;
}
