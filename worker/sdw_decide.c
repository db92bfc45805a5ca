/*
 * The descriptor writer's decision (worker/sdw_decide.h), apart from its
 * I/O so that it can be driven by a hostile caller in a unit suite and a
 * fuzz target: the writer (worker/sdw.c) is the one process that holds
 * CAP_SYS_ADMIN on behalf of workers, and a compromised worker chooses
 * every byte of what it asks.  The rules are sdw.c's threat model.
 */
#include "worker/sdw_decide.h"

#include <string.h>

#include "daemon/log.h"
#include "proto/cur.h"
#include "proto/ntacl.h"
#include "proto/secdesc.h"

/* one writer, one request at a time: too big for its stack */
static struct secdesc	sdd_old, sdd_new, sdd_par, sdd_calc;

static ntstatus_t
sdw_decode_stored(const uint8_t *p, size_t len, ntstatus_t err,
    struct secdesc *sd, int *have)
{
	*have = 0;
	if (err != STATUS_SUCCESS)
		return err;
	if (p == NULL)
		return STATUS_SUCCESS;
	if (secdesc_decode(p, len, sd) != 0)
		return STATUS_INVALID_SECURITY_DESCR;
	*have = 1;
	return STATUS_SUCCESS;
}

/*
 * The parts a SET leaves unstored (a file with nothing stored, or only a
 * SACL) come from what the caller derived from the kernel, so a stored
 * descriptor holds owner, group and DACL together or none of them.
 */
static ntstatus_t
sdw_fill(struct secdesc *old, const struct secdesc *new)
{
	if (!old->has_owner) {
		if (!new->has_owner)
			return STATUS_INVALID_SECURITY_DESCR;
		old->has_owner = 1;
		old->owner = new->owner;
	}
	if (!old->has_group) {
		if (!new->has_group)
			return STATUS_INVALID_SECURITY_DESCR;
		old->has_group = 1;
		old->group = new->group;
	}
	if (!(old->control & SE_DACL_PRESENT))
		(void)ntacl_merge(old, new, DACL_SECURITY_INFORMATION, old);
	return STATUS_SUCCESS;
}

/*
 * SDW_OP_INHERIT: is the SACL given the one the parent passes on to this
 * new file of the caller (MS-DTYP 2.5.3.4, proto/ntacl_sacl.c), computed
 * here from the parent's stored descriptor and the caller's identity?
 * The worker computed it the same way; a difference is a bug or a lie.
 * What a caller gains by pointing at another directory it can reach: that
 * directory's inheritable SACL on its own file, which changes nobody's
 * access (usmbd audits nothing and enforces no label).
 */
static ntstatus_t
sdw_inherit_check(const struct ntacl_token *tok, const struct sdw_target *t,
    const struct secdesc *given)
{
	ntstatus_t status;
	int have;

	if ((status = sdw_decode_stored(t->parent, t->parent_len,
	    t->parent_err, &sdd_par, &have)) != STATUS_SUCCESS)
		return status;
	if (!have)
		memset(&sdd_par, 0, sizeof(sdd_par));
	memset(&sdd_calc, 0, sizeof(sdd_calc));
	if (ntacl_sacl_inherit(&sdd_par, t->is_dir, tok, NULL, &sdd_calc) <= 0 ||
	    (sdd_calc.control & SE_SACL_BITS) != (given->control &
	    SE_SACL_BITS) || sdd_calc.sacl_len != given->sacl_len ||
	    memcmp(sdd_calc.sacl, given->sacl, given->sacl_len) != 0) {
		log_warnx("sdw: an inherited SACL that the parent does not "
		    "pass on (uid %u)", (unsigned)tok->user.sub[1]);
		return STATUS_INVALID_SECURITY_DESCR;
	}
	return STATUS_SUCCESS;
}

/*
 * The questions, all must say yes.  Owner, group, DACL: does the stored
 * DACL give the caller WRITE_OWNER (no stored DACL: the owner only, as
 * the kernel-derived one says), and may the caller, by the kernel's rule,
 * change the POSIX side (the DACL: the file's owner only).  The SACL:
 * does the caller hold SeSecurityPrivilege (a member of `server admin
 * group`, by the groups the kernel gave at connect), whoever owns the
 * file, as on Windows; so do the scoped policy ids (SCOPE).  A label
 * needs what the owner needs (WRITE_OWNER, MS-FSA 2.1.5.17), the resource
 * attributes what the DACL needs (WRITE_DAC) but not the file's
 * ownership: no POSIX side moves with them.  SDW_OP_INHERIT: the SACL is
 * the one the parent passes on, which needs no privilege.
 */
ntstatus_t
sdw_decide(const struct sdw_caller *cl, const struct sdw_target *t,
    uint32_t which, const uint8_t *p, size_t len, uint8_t *out,
    size_t outmax, size_t *outlen)
{
	const uint32_t ogd = OWNER_SECURITY_INFORMATION |
	    GROUP_SECURITY_INFORMATION | DACL_SECURITY_INFORMATION;
	struct ntacl_token tok;
	uint32_t need = 0, got;
	ntstatus_t status;
	struct wcur w;
	int have, rc;

	*outlen = 0;
	/* nothing asked for would store a descriptor nobody set */
	if (which == 0 || (which & ~(ogd | SACL_SECURITY_INFORMATION |
	    SACL_CLASS_BITS)))
		return STATUS_INVALID_PARAMETER;
	if (t->inherit && (!(which & SACL_SECURITY_INFORMATION) ||
	    cl->uid != t->owner_uid))
		return STATUS_ACCESS_DENIED;
	if ((which & (SACL_SECURITY_INFORMATION | SCOPE_SECURITY_INFORMATION)) &&
	    !cl->security && !t->inherit)
		return STATUS_PRIVILEGE_NOT_HELD;
	if (secdesc_decode(p, len, &sdd_new) != 0 ||
	    ntacl_validate(&sdd_new) != 0)
		return STATUS_INVALID_SECURITY_DESCR;
	ntacl_token_unix(&tok, cl->uid, cl->gid, cl->groups,
	    cl->ngroups < NTACL_TOKEN_GROUPS ? cl->ngroups :
	    NTACL_TOKEN_GROUPS);
	if (t->inherit && (status = sdw_inherit_check(&tok, t, &sdd_new)) !=
	    STATUS_SUCCESS)
		return status;
	if ((status = sdw_decode_stored(t->stored, t->stored_len,
	    t->stored_err, &sdd_old, &have)) != STATUS_SUCCESS)
		return status;
	if (!have) {
		memset(&sdd_old, 0, sizeof(sdd_old));
		sdd_old.control = SE_SELF_RELATIVE;
	}
	if (which & (DACL_SECURITY_INFORMATION |
	    ATTRIBUTE_SECURITY_INFORMATION))
		need |= NTACL_WRITE_DAC;
	if (which & (OWNER_SECURITY_INFORMATION | GROUP_SECURITY_INFORMATION |
	    LABEL_SECURITY_INFORMATION))
		need |= NTACL_WRITE_OWNER;
	/*
	 * The file's Unix owner may: the kernel lets it rewrite the POSIX
	 * side (chmod, setfacl) whatever the descriptor says, so refusing it
	 * here would protect nothing, and it keeps an owner from being
	 * locked out of its own file.  Anyone else needs the rights under
	 * a stored DACL (a stored SACL alone grants nothing), and for the
	 * DACL the kernel's rule (only the owner changes a POSIX ACL)
	 * refuses it anyway.
	 */
	if (need != 0 && cl->uid != t->owner_uid) {
		if (!(sdd_old.control & SE_DACL_PRESENT) ||
		    ntacl_check(&sdd_old, &tok, need, &got) != 0)
			return STATUS_ACCESS_DENIED;
		if (which & DACL_SECURITY_INFORMATION)
			return STATUS_ACCESS_DENIED;
	}
	/* Windows: an owner one holds (oneself, a group of one's token) */
	if ((which & OWNER_SECURITY_INFORMATION) && (!sdd_new.has_owner ||
	    !ntacl_token_has(&tok, &sdd_new.owner)))
		return STATUS_INVALID_OWNER;
	rc = ntacl_merge(&sdd_old, &sdd_new, which, &sdd_old);
	if (rc != 0)
		return rc == -1 ? STATUS_INVALID_OWNER : rc == -2 ?
		    STATUS_INVALID_PRIMARY_GROUP : STATUS_INVALID_SECURITY_DESCR;
	if ((which & ogd) && (status = sdw_fill(&sdd_old, &sdd_new)) !=
	    STATUS_SUCCESS)
		return status;
	/* a class set that brought nothing where nothing was: store none */
	if (!have && !sdd_old.has_owner && !sdd_old.has_group &&
	    !(sdd_old.control & (SE_DACL_PRESENT | SE_SACL_PRESENT)))
		return STATUS_SUCCESS;
	wcur_init(&w, out, outmax);
	(void)secdesc_encode(&w, &sdd_old, ogd | SACL_SECURITY_INFORMATION);
	if (w.err)
		return STATUS_INVALID_SECURITY_DESCR;
	*outlen = wcur_off(&w);
	return STATUS_SUCCESS;
}
