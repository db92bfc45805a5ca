/*
 * Self-relative security descriptors (MS-DTYP 2.4.2 - 2.4.6).
 */
#include <stdio.h>
#include <string.h>

#include "proto/secdesc.h"

#define SD_HDR_LEN	20
#define ACL_HDR_LEN	8
#define ACE_HDR_LEN	8

void
secdesc_sid_make(struct secdesc_sid *s, uint8_t auth, unsigned n,
    uint32_t a, uint32_t b)
{
	memset(s, 0, sizeof(*s));
	s->revision = 1;
	s->nsub = (uint8_t)n;
	s->auth[5] = auth;
	s->sub[0] = a;
	s->sub[1] = b;
}

void
secdesc_sid_unix_user(struct secdesc_sid *s, uint32_t uid)
{
	secdesc_sid_make(s, 22, 2, 1, uid);
}

void
secdesc_sid_unix_group(struct secdesc_sid *s, uint32_t gid)
{
	secdesc_sid_make(s, 22, 2, 2, gid);
}

void
secdesc_sid_world(struct secdesc_sid *s)
{
	secdesc_sid_make(s, 1, 1, 0, 0);
}

void
secdesc_sid_creator_owner(struct secdesc_sid *s)
{
	secdesc_sid_make(s, 3, 1, 0, 0);
}

void
secdesc_sid_creator_group(struct secdesc_sid *s)
{
	secdesc_sid_make(s, 3, 1, 1, 0);
}

void
secdesc_sid_system(struct secdesc_sid *s)
{
	secdesc_sid_make(s, 5, 1, 18, 0);
}

int
secdesc_sid_equal(const struct secdesc_sid *a, const struct secdesc_sid *b)
{
	return a->revision == b->revision && a->nsub == b->nsub &&
	    memcmp(a->auth, b->auth, 6) == 0 &&
	    memcmp(a->sub, b->sub, a->nsub * sizeof(uint32_t)) == 0;
}

int
secdesc_sid_unix(const struct secdesc_sid *s, int kind, uint32_t *id)
{
	static const uint8_t auth22[6] = { 0, 0, 0, 0, 0, 22 };

	if (s->revision != 1 || s->nsub != 2 || memcmp(s->auth, auth22, 6) ||
	    s->sub[0] != (uint32_t)kind)
		return 0;
	*id = s->sub[1];
	return 1;
}

int
secdesc_sid_nfs_to_unix(struct secdesc_sid *s)
{
	static const uint8_t auth5[6] = { 0, 0, 0, 0, 0, 5 };
	uint32_t kind, id;

	if (s->revision != 1 || s->nsub != 3 || memcmp(s->auth, auth5, 6) ||
	    s->sub[0] != 88 || (s->sub[1] != 1 && s->sub[1] != 2))
		return 0;
	kind = s->sub[1];
	id = s->sub[2];
	secdesc_sid_make(s, 22, 2, kind, id);
	return 1;
}

char *
secdesc_sid_str(const struct secdesc_sid *s, char *buf, size_t len)
{
	uint64_t auth = 0;
	size_t off;
	int i, n;

	for (i = 0; i < 6; i++)
		auth = auth << 8 | s->auth[i];
	n = snprintf(buf, len, "S-%u-%llu", s->revision,
	    (unsigned long long)auth);
	off = n < 0 ? 0 : (size_t)n;
	for (i = 0; i < s->nsub && off < len; i++) {
		n = snprintf(buf + off, len - off, "-%u", s->sub[i]);
		off += n < 0 ? 0 : (size_t)n;
	}
	return buf;
}

/* A SID at offset off of the SD; 0 or -1. */
static int
sid_decode(struct cur *sd, size_t off, struct secdesc_sid *s)
{
	struct cur c = *sd;
	int i;

	cur_seek(&c, off);
	s->revision = cur_u8(&c);
	s->nsub = cur_u8(&c);
	cur_bytes(&c, s->auth, 6);
	if (c.err || s->revision != 1 || s->nsub > SECDESC_SUBAUTH_MAX)
		return -1;
	for (i = 0; i < s->nsub; i++)
		s->sub[i] = cur_le32(&c);
	return c.err ? -1 : 0;
}

static size_t
sid_len(const struct secdesc_sid *s)
{
	return 8 + 4u * s->nsub;
}

static void
sid_encode(struct wcur *w, const struct secdesc_sid *s)
{
	int i;

	wcur_u8(w, s->revision);
	wcur_u8(w, s->nsub);
	wcur_bytes(w, s->auth, 6);
	for (i = 0; i < s->nsub; i++)
		wcur_le32(w, s->sub[i]);
}

static int
acl_decode(struct cur *sdc, size_t off, struct secdesc *sd)
{
	struct cur c = *sdc, ac;
	uint16_t size, count, alen;
	size_t pos;
	unsigned i;
	uint8_t rev;

	cur_seek(&c, off);
	rev = cur_u8(&c);
	if (rev != 2 && rev != 4)	/* 4: object ACEs, refused later */
		return -1;
	cur_skip(&c, 1);
	size = cur_le16(&c);
	count = cur_le16(&c);
	cur_skip(&c, 2);
	if (c.err || size < ACL_HDR_LEN || count > SECDESC_ACE_MAX)
		return -1;
	ac = cur_sub(sdc, off, size);
	if (ac.err)
		return -1;
	pos = ACL_HDR_LEN;
	for (i = 0; i < count; i++) {
		struct secdesc_ace *a = &sd->ace[i];
		struct cur e = cur_sub(&ac, pos, size - pos);

		a->type = cur_u8(&e);
		a->flags = cur_u8(&e);
		alen = cur_le16(&e);
		a->mask = cur_le32(&e);
		if (e.err || alen < ACE_HDR_LEN + 8 || alen > size - pos)
			return -1;
		e = cur_sub(&ac, pos, alen);
		if (sid_decode(&e, ACE_HDR_LEN, &a->sid) != 0)
			return -1;
		pos += alen;
	}
	sd->nace = count;
	return 0;
}

/*
 * The SACL at offset off, copied whole: its header and each ACE's header
 * (type, flags, AceSize: MS-DTYP 2.4.4.1) must lie inside its AclSize,
 * the rest of each ACE is kept as it came.
 */
static int
sacl_decode(struct cur *sdc, size_t off, struct secdesc *sd)
{
	struct cur c = *sdc, ac;
	const uint8_t *p;
	uint16_t size, count, alen;
	size_t pos;
	unsigned i;
	uint8_t rev;

	cur_seek(&c, off);
	rev = cur_u8(&c);
	cur_skip(&c, 1);
	size = cur_le16(&c);
	count = cur_le16(&c);
	if (c.err || rev < 2 || rev > 4 || size < ACL_HDR_LEN ||
	    size > SECDESC_SACL_MAX)
		return -1;
	ac = cur_sub(sdc, off, size);
	p = cur_view(&ac, size);
	if (ac.err || p == NULL)
		return -1;
	pos = ACL_HDR_LEN;
	for (i = 0; i < count; i++) {
		if (size - pos < 4)
			return -1;
		alen = le16_get(p + pos + 2);
		if (alen < 4 || alen > size - pos)
			return -1;
		pos += alen;
	}
	memcpy(sd->sacl, p, size);
	sd->sacl_len = size;
	return 0;
}

int
secdesc_decode(const uint8_t *buf, size_t len, struct secdesc *sd)
{
	struct cur c;
	uint32_t oowner, ogroup, osacl, odacl;

	memset(sd, 0, sizeof(*sd));
	cur_init(&c, buf, len);
	if (cur_u8(&c) != 1)
		return -1;
	cur_skip(&c, 1);
	sd->control = cur_le16(&c);
	oowner = cur_le32(&c);
	ogroup = cur_le32(&c);
	osacl = cur_le32(&c);
	odacl = cur_le32(&c);
	if (c.err || !(sd->control & SE_SELF_RELATIVE))
		return -1;
	if (oowner != 0) {
		if (sid_decode(&c, oowner, &sd->owner) != 0)
			return -1;
		sd->has_owner = 1;
	}
	if (ogroup != 0) {
		if (sid_decode(&c, ogroup, &sd->group) != 0)
			return -1;
		sd->has_group = 1;
	}
	if ((sd->control & SE_DACL_PRESENT) && odacl != 0) {
		if (acl_decode(&c, odacl, sd) != 0)
			return -1;
		sd->has_dacl = 1;
	}
	if ((sd->control & SE_SACL_PRESENT) && osacl != 0 &&
	    sacl_decode(&c, osacl, sd) != 0)
		return -1;
	return 0;
}

uint32_t
secdesc_sacl_class(uint8_t type)
{
	switch (type) {
	case SYSTEM_MANDATORY_LABEL_ACE_TYPE:
		return LABEL_SECURITY_INFORMATION;
	case SYSTEM_RESOURCE_ATTRIBUTE_ACE_TYPE:
		return ATTRIBUTE_SECURITY_INFORMATION;
	case SYSTEM_SCOPED_POLICY_ID_ACE_TYPE:
		return SCOPE_SECURITY_INFORMATION;
	}
	return SACL_SECURITY_INFORMATION;
}

/*
 * The SACL's ACEs of the classes in which: their count, and *len the
 * bytes of a SACL holding them (header included).  The stored SACL was
 * checked by sacl_decode (every ACE header inside it).
 */
static unsigned
sacl_select(const struct secdesc *sd, uint32_t which, size_t *len)
{
	size_t pos = ACL_HDR_LEN, alen;
	unsigned i, count, n = 0;

	*len = ACL_HDR_LEN;
	if (sd->sacl_len < ACL_HDR_LEN)
		return 0;
	count = le16_get(sd->sacl + 4);
	for (i = 0; i < count && pos + 4 <= sd->sacl_len; i++, pos += alen) {
		alen = le16_get(sd->sacl + pos + 2);
		if (alen < 4 || alen > sd->sacl_len - pos)
			break;
		if (secdesc_sacl_class(sd->sacl[pos]) & which) {
			*len += alen;
			n++;
		}
	}
	return n;
}

static void
sacl_select_encode(struct wcur *w, const struct secdesc *sd, uint32_t which,
    size_t len, unsigned n)
{
	size_t pos = ACL_HDR_LEN, alen;
	unsigned i, count = le16_get(sd->sacl + 4);

	wcur_u8(w, sd->sacl[0]);
	wcur_u8(w, 0);
	wcur_le16(w, (uint16_t)len);
	wcur_le16(w, (uint16_t)n);
	wcur_le16(w, 0);
	for (i = 0; i < count && pos + 4 <= sd->sacl_len; i++, pos += alen) {
		alen = le16_get(sd->sacl + pos + 2);
		if (alen < 4 || alen > sd->sacl_len - pos)
			break;
		if (secdesc_sacl_class(sd->sacl[pos]) & which)
			wcur_bytes(w, sd->sacl + pos, alen);
	}
}

size_t
secdesc_encode(struct wcur *w, const struct secdesc *sd, uint32_t which)
{
	size_t need = SD_HDR_LEN, base = wcur_off(w), acl_len = 0, sacl_len = 0;
	uint16_t control = SE_SELF_RELATIVE;
	uint8_t *hdr;
	unsigned i, nsel = 0;
	int select = 0;

	if ((which & OWNER_SECURITY_INFORMATION) && sd->has_owner)
		need += sid_len(&sd->owner);
	if ((which & GROUP_SECURITY_INFORMATION) && sd->has_group)
		need += sid_len(&sd->group);
	if ((which & DACL_SECURITY_INFORMATION) &&
	    (sd->has_dacl || (sd->control & SE_DACL_PRESENT))) {
		/* a NULL DACL: present, at offset 0 (MS-DTYP 2.4.6) */
		if (sd->has_dacl) {
			acl_len = ACL_HDR_LEN;
			for (i = 0; i < sd->nace; i++)
				acl_len += ACE_HDR_LEN +
				    sid_len(&sd->ace[i].sid);
		}
		need += acl_len;
		control |= SE_DACL_PRESENT;
		control |= sd->control & (SE_DACL_DEFAULTED |
		    SE_DACL_AUTO_INHERIT_REQ | SE_DACL_PROTECTED |
		    SE_DACL_AUTO_INHERITED);
	}
	/* only when asked for: the SACL never rides along with the rest */
	if ((which & SACL_SECURITY_INFORMATION) &&
	    (sd->control & SE_SACL_PRESENT)) {
		sacl_len = sd->sacl_len;
		need += sacl_len;
		control |= sd->control & SE_SACL_BITS;
	} else if ((which & SACL_CLASS_BITS) &&
	    (sd->control & SE_SACL_PRESENT) &&
	    (nsel = sacl_select(sd, which & SACL_CLASS_BITS, &sacl_len)) > 0) {
		/* the label (attribute, scope) ACEs alone: MS-FSA 2.1.5.14 */
		select = 1;
		need += sacl_len;
		control |= sd->control & SE_SACL_BITS;
	} else
		sacl_len = 0;
	if (need > wcur_left(w)) {
		w->err = 1;
		return need;
	}
	if ((hdr = wcur_reserve(w, SD_HDR_LEN)) == NULL)
		return need;
	memset(hdr, 0, SD_HDR_LEN);
	hdr[0] = 1;
	le16_put(hdr + 2, control);
	/*
	 * MS-DTYP 2.4.6: the order is free; Windows puts the SACL, then the
	 * DACL, then owner and group.
	 */
	if (sacl_len > 0) {
		le32_put(hdr + 12, (uint32_t)(wcur_off(w) - base));
		if (select)
			sacl_select_encode(w, sd, which & SACL_CLASS_BITS,
			    sacl_len, nsel);
		else
			wcur_bytes(w, sd->sacl, sacl_len);
	}
	if (acl_len > 0) {
		le32_put(hdr + 16, (uint32_t)(wcur_off(w) - base));
		wcur_u8(w, 2);
		wcur_u8(w, 0);
		wcur_le16(w, (uint16_t)acl_len);
		wcur_le16(w, (uint16_t)sd->nace);
		wcur_le16(w, 0);
		for (i = 0; i < sd->nace; i++) {
			wcur_u8(w, sd->ace[i].type);
			wcur_u8(w, sd->ace[i].flags);
			wcur_le16(w, (uint16_t)(ACE_HDR_LEN +
			    sid_len(&sd->ace[i].sid)));
			wcur_le32(w, sd->ace[i].mask);
			sid_encode(w, &sd->ace[i].sid);
		}
	}
	if ((which & OWNER_SECURITY_INFORMATION) && sd->has_owner) {
		le32_put(hdr + 4, (uint32_t)(wcur_off(w) - base));
		sid_encode(w, &sd->owner);
	}
	if ((which & GROUP_SECURITY_INFORMATION) && sd->has_group) {
		le32_put(hdr + 8, (uint32_t)(wcur_off(w) - base));
		sid_encode(w, &sd->group);
	}
	return need;
}
