/*
 * Messages between the master and the ticket helper (`usmbd --child krb`,
 * worker/krb.c), HACKING.md "Kerberos logons".
 *
 * MSG_KRB_KEYTAB (master -> helper): fd = the keytab, opened by the master
 * (it is root-only, as an AD join leaves it); no payload.  The helper reads
 * the keys once and closes it.
 * MSG_KRB_REQ (master -> helper): struct krbmsg_req, whose blobs are a
 * client's bytes as the gate received them (the AP-REQ, the DER mechTypes,
 * the client's mechListMIC); the master copies them unread.  Answered by
 * MSG_KRB_REP with the same id: struct krbmsg_rep.
 *
 * Kerberos after another mechanism (RFC 4178 5): with mech_types, the
 * helper answers our mechListMIC over them (gss_get_mic) and checks the
 * client's (gss_verify_mic); when the client's did not come with the
 * AP-REQ, the helper keeps the context (at most KRBMSG_CTX_MAX, for
 * KRBMSG_CTX_SECS) and answers STATUS_MORE_PROCESSING_REQUIRED with ctx
 * naming it; a second request with that ctx and the MIC (no token)
 * finishes it: the answer then is the ticket's, as for one leg.
 */
#ifndef USMBD_DAEMON_KRBMSG_H
#define USMBD_DAEMON_KRBMSG_H

#include <stddef.h>
#include <stdint.h>

#include "daemon/authmsg.h"
#include "proto/pac.h"

#define KRBMSG_PRINCIPAL_MAX	256
#define KRBMSG_KEY_MAX		64
#define KRBMSG_WHY_MAX		160
#define KRBMSG_CTX_MAX		64
#define KRBMSG_CTX_SECS		30

struct krbmsg_req {
	uint64_t	 ctx;		/* 0: a new AP-REQ; else a kept context */
	const uint8_t	*token;		/* views into the message */
	uint32_t	 token_len;
	const uint8_t	*mech_types;	/* DER MechTypeList, or empty: no MIC */
	uint32_t	 mech_types_len;
	const uint8_t	*mic;		/* the client's mechListMIC, or empty */
	uint32_t	 mic_len;
};

struct krbmsg_rep {
	uint32_t	 status;	/* 0: the ticket is good; else NTSTATUS */
	char		 principal[KRBMSG_PRINCIPAL_MAX];	/* user@REALM */
	uint32_t	 key_len;	/* GSS_C_INQ_SSPI_SESSION_KEY */
	uint8_t		 key[KRBMSG_KEY_MAX];
	uint32_t	 lifetime;	/* seconds the ticket has left */
	uint32_t	 pac;		/* 1: the ticket carries a PAC */
	uint32_t	 out_len;	/* the AP-REP token, may be empty */
	uint8_t		 out[AUTH_MECH_OUT_MAX];
	char		 why[KRBMSG_WHY_MAX];	/* a failure, in the library's words */
	uint64_t	 ctx;		/* with STATUS_MORE_PROCESSING_REQUIRED */
	uint32_t	 mic_len;	/* our mechListMIC, or 0 */
	uint8_t		 mic[AUTH_MIC_MAX];
	/*
	 * The PAC's logon info, when there is one (proto/pac.h): logged by
	 * the master, never used (groups come from NSS).
	 */
	char		 pac_domain[PAC_SID_STR_MAX];	/* "" when none */
	uint32_t	 pac_n_groups;
	uint32_t	 pac_n_rids;
	uint32_t	 pac_rids[PAC_MAX_RIDS];
	uint32_t	 pac_extra_sids;
};

/* Encoders return the length or -EMSGSIZE; decoders 0 or -EBADMSG. */
int	krbmsg_rep_encode(const struct krbmsg_rep *, uint8_t *buf, size_t cap);
int	krbmsg_rep_decode(struct krbmsg_rep *, const uint8_t *p, size_t len);
int	krbmsg_req_encode(const struct krbmsg_req *, uint8_t *buf, size_t cap);
int	krbmsg_req_decode(struct krbmsg_req *, const uint8_t *p, size_t len);

#endif
