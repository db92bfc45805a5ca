/*
 * The codec of a file's opens value (shm/opens.c has its layout, v4): one
 * open record to and from its SHM_OREC_LEN bytes, and the value's header
 * parsed with every length checked against the counts before any record
 * is read.  Read by opens.c, leases.c and durable.c; fuzzed by fuzz_shmrec.
 */
#include <errno.h>
#include <string.h>

#include "shm/shm_priv.h"

void
shm_orec_put(uint8_t *p, const struct shm_open_rec *r)
{
	le64_put(p, r->persistent_id);
	le32_put(p + 8, (uint32_t)r->pid);
	le64_put(p + 12, r->session_id);
	le32_put(p + OR_ACCESS, r->access);
	le32_put(p + OR_SHARE, r->share_access);
	le32_put(p + 28, r->create_options);
	p[OR_OPLOCK] = r->oplock_level;
	p[33] = r->oplock_breaking_to;
	le32_put(p + 34, r->lease_state);
	memcpy(p + 38, r->lease_key, SHM_GUID_LEN);
	memcpy(p + OR_CLIENT_GUID, r->client_guid, SHM_GUID_LEN);
	le32_put(p + OR_FLAGS, r->flags);
	le64_put(p + 74, r->opened);
	le64_put(p + OR_LINK, r->link);
}

void
shm_orec_get(const uint8_t *p, struct shm_open_rec *r)
{
	memset(r, 0, sizeof(*r));
	r->persistent_id = le64_get(p);
	r->pid = (pid_t)le32_get(p + 8);
	r->session_id = le64_get(p + 12);
	r->access = le32_get(p + OR_ACCESS);
	r->share_access = le32_get(p + OR_SHARE);
	r->create_options = le32_get(p + 28);
	r->oplock_level = p[OR_OPLOCK];
	r->oplock_breaking_to = p[33];
	r->lease_state = le32_get(p + 34);
	memcpy(r->lease_key, p + 38, SHM_GUID_LEN);
	memcpy(r->client_guid, p + OR_CLIENT_GUID, SHM_GUID_LEN);
	r->flags = le32_get(p + OR_FLAGS);
	r->opened = le64_get(p + 74);
	r->link = le64_get(p + OR_LINK);
}

/* Opens holding an oplock or a lease: what a WRITE or an open may break. */
uint32_t
shm_ofile_ncaching(const struct shm_ofile *of)
{
	uint32_t i, n = 0;

	for (i = 0; i < of->n; i++)
		n += of->rec[(size_t)i * SHM_OREC_LEN + OR_OPLOCK] != SHM_OPLOCK_NONE;
	return n;
}

int
shm_ofile_parse(const uint8_t *p, size_t len, struct shm_ofile *of)
{
	size_t off;

	memset(of, 0, sizeof(*of));
	if (len < SHM_OFILE_HDR || p[0] != SHM_OFILE_V4)
		return -EPROTO;
	of->n = le32_get(p + 1);
	of->ndel = p[5];
	if (of->ndel > SHM_ODEL_MAX)
		return -EPROTO;
	off = SHM_OFILE_HDR + (size_t)of->ndel * SHM_ODEL_LEN;
	if (len < off || (len - off) / SHM_OREC_LEN != of->n ||
	    (len - off) % SHM_OREC_LEN != 0)
		return -EPROTO;
	for (uint32_t i = 0; i < of->ndel; i++) {
		of->del[i].link = le64_get(p + SHM_OFILE_HDR + i * SHM_ODEL_LEN);
		of->del[i].uid = le32_get(p + SHM_OFILE_HDR + i * SHM_ODEL_LEN + 8);
	}
	of->rec = (uint8_t *)p + off;
	return 0;
}
