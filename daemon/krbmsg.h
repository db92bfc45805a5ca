/*
 * Messages between the master and the ticket helper (`usmbd --child krb`,
 * worker/krb.c), HACKING.md "Kerberos logons".
 *
 * MSG_KRB_KEYTAB (master -> helper): fd = the keytab, opened by the master
 * (it is root-only, as an AD join leaves it); no payload.  The helper reads
 * the keys once and closes it.
 * MSG_KRB_REQ (master -> helper): payload = a client's GSS-API krb5 token
 * (the AP-REQ), bytes as the gate received them; the master never reads
 * them.  Answered by MSG_KRB_REP with the same id: struct krbmsg_rep.
 */
#ifndef USMBD_DAEMON_KRBMSG_H
#define USMBD_DAEMON_KRBMSG_H

#include <stddef.h>
#include <stdint.h>

#include "daemon/authmsg.h"

#define KRBMSG_PRINCIPAL_MAX	256
#define KRBMSG_KEY_MAX		64
#define KRBMSG_WHY_MAX		160

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
};

/* Encoders return the length or -EMSGSIZE; decoders 0 or -EBADMSG. */
int	krbmsg_rep_encode(const struct krbmsg_rep *, uint8_t *buf, size_t cap);
int	krbmsg_rep_decode(struct krbmsg_rep *, const uint8_t *p, size_t len);

#endif
