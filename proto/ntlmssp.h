/*
 * NTLMSSP (MS-NLMP) for the server side of SMB2 SESSION_SETUP: NEGOTIATE
 * decoding, CHALLENGE building, AUTHENTICATE decoding, NTLMv2 verification
 * (the master runs that, against the passdb's NT hash), and the NTLMSSP
 * signature used for SPNEGO's mechListMIC.  NTLMv1 and LM are refused.
 */
#ifndef USMBD_PROTO_NTLMSSP_H
#define USMBD_PROTO_NTLMSSP_H

#include <stddef.h>
#include <stdint.h>

#include "proto/ntstatus.h"

/* MS-NLMP 2.2.2.1 MessageType */
#define NTLMSSP_NEGOTIATE_MESSAGE	1
#define NTLMSSP_CHALLENGE_MESSAGE	2
#define NTLMSSP_AUTHENTICATE_MESSAGE	3

/* MS-NLMP 2.2.2.5 NegotiateFlags */
#define NTLMSSP_NEGOTIATE_UNICODE			0x00000001u
#define NTLMSSP_NEGOTIATE_OEM				0x00000002u
#define NTLMSSP_REQUEST_TARGET				0x00000004u
#define NTLMSSP_NEGOTIATE_SIGN				0x00000010u
#define NTLMSSP_NEGOTIATE_SEAL				0x00000020u
#define NTLMSSP_NEGOTIATE_DATAGRAM			0x00000040u
#define NTLMSSP_NEGOTIATE_LM_KEY			0x00000080u
#define NTLMSSP_NEGOTIATE_NTLM				0x00000200u
#define NTLMSSP_ANONYMOUS				0x00000800u
#define NTLMSSP_NEGOTIATE_OEM_DOMAIN_SUPPLIED		0x00001000u
#define NTLMSSP_NEGOTIATE_OEM_WORKSTATION_SUPPLIED	0x00002000u
#define NTLMSSP_NEGOTIATE_ALWAYS_SIGN			0x00008000u
#define NTLMSSP_TARGET_TYPE_DOMAIN			0x00010000u
#define NTLMSSP_TARGET_TYPE_SERVER			0x00020000u
#define NTLMSSP_NEGOTIATE_EXTENDED_SESSIONSECURITY	0x00080000u
#define NTLMSSP_NEGOTIATE_IDENTIFY			0x00100000u
#define NTLMSSP_REQUEST_NON_NT_SESSION_KEY		0x00400000u
#define NTLMSSP_NEGOTIATE_TARGET_INFO			0x00800000u
#define NTLMSSP_NEGOTIATE_VERSION			0x02000000u
#define NTLMSSP_NEGOTIATE_128				0x20000000u
#define NTLMSSP_NEGOTIATE_KEY_EXCH			0x40000000u
#define NTLMSSP_NEGOTIATE_56				0x80000000u

/* MS-NLMP 2.2.2.1 AV_PAIR AvId */
#define MSV_AV_EOL			0
#define MSV_AV_NB_COMPUTER_NAME		1
#define MSV_AV_NB_DOMAIN_NAME		2
#define MSV_AV_DNS_COMPUTER_NAME	3
#define MSV_AV_DNS_DOMAIN_NAME		4
#define MSV_AV_DNS_TREE_NAME		5
#define MSV_AV_FLAGS			6
#define MSV_AV_TIMESTAMP		7
#define MSV_AV_SINGLE_HOST		8
#define MSV_AV_TARGET_NAME		9
#define MSV_AV_CHANNEL_BINDINGS		10
#define MSV_AV_FLAG_MIC_PRESENT		0x00000002u

#define NTLMSSP_MIC_OFFSET	72	/* after the 8-byte Version field */
#define NTLMSSP_NAME_MAX	256	/* UTF-8 bytes with the NUL */

struct ntlmssp_auth {
	uint32_t	 flags;
	const uint8_t	*lm;			/* views into the message */
	uint16_t	 lm_len;
	const uint8_t	*nt;
	uint16_t	 nt_len;
	char		 user[NTLMSSP_NAME_MAX];	/* UTF-8, validated */
	char		 domain[NTLMSSP_NAME_MAX];
	char		 workstation[NTLMSSP_NAME_MAX];
	const uint8_t	*enc_session_key;
	uint16_t	 enc_session_key_len;
	int		 has_mic;		/* MsvAvFlags says a MIC is there */
	size_t		 mic_offset;		/* of the MIC in the message */
	/* Wire forms of the names, for NTOWFv2 (UTF-16LE when unicode). */
	const uint8_t	*user_raw;
	uint16_t	 user_raw_len;
	const uint8_t	*domain_raw;
	uint16_t	 domain_raw_len;
	int		 unicode;
	int		 anonymous;		/* empty user, no NT response */
	int		 ntlmv2;		/* nt_len > 24 and a v2 blob */
	uint64_t	 timestamp;		/* TimeStamp of the NTLMv2 blob */
	const uint8_t	*client_challenge;	/* 8 bytes in the blob, or NULL */
};

/* Type of an NTLMSSP message (1, 2 or 3), or -EBADMSG. */
int	ntlmssp_msg_type(const uint8_t *msg, size_t len);

/* NEGOTIATE_MESSAGE (MS-NLMP 2.2.1.1): 0 and *flags, or -EBADMSG. */
int	ntlmssp_decode_negotiate(const uint8_t *msg, size_t len,
	    uint32_t *flags);

/*
 * CHALLENGE_MESSAGE (MS-NLMP 2.2.1.2) answering a client that sent
 * client_flags.  Names are UTF-8; the DNS ones may be NULL or "" to leave
 * them out.  The target name is netbios_computer (TARGET_TYPE_SERVER: a
 * standalone server).  Returns the length, or -EMSGSIZE / -EINVAL (a name
 * that is not valid UTF-8).
 */
int	ntlmssp_build_challenge(uint8_t *buf, size_t cap, uint32_t client_flags,
	    const uint8_t server_challenge[8], const char *netbios_domain,
	    const char *netbios_computer, const char *dns_domain,
	    const char *dns_computer, uint64_t filetime_now);

/* AUTHENTICATE_MESSAGE (MS-NLMP 2.2.1.3): 0 or -EBADMSG. */
int	ntlmssp_decode_authenticate(const uint8_t *msg, size_t len,
	    struct ntlmssp_auth *out);

/*
 * NTLMv2 check (MS-NLMP 3.3.2, 3.2.5.1.2): NTOWFv2 from nt_hash and the
 * user and domain as sent, NTProofStr against the CHALLENGE's server
 * challenge, the session key (RC4-decrypted when KEY_EXCH), and the MIC over
 * the three messages when the client's MsvAvFlags announces one.  Returns
 * STATUS_SUCCESS with exported_session_key set, or STATUS_LOGON_FAILURE
 * (exported_session_key zeroed).
 */
ntstatus_t ntlmssp_server_verify(const uint8_t nt_hash[16],
	    const struct ntlmssp_auth *a, const uint8_t *negotiate,
	    size_t negotiate_len, const uint8_t *challenge,
	    size_t challenge_len, const uint8_t *authenticate,
	    size_t authenticate_len, uint8_t exported_session_key[16]);

/*
 * The exported session key of an anonymous AUTHENTICATE (a->anonymous):
 * zero, or with KEY_EXCH the client's random key (MS-NLMP 3.3.1).
 * 0, -EINVAL (not anonymous, key zeroed) or -EIO.
 */
int	ntlmssp_anonymous_key(const struct ntlmssp_auth *a,
	    uint8_t exported_session_key[16]);

/* NT hash = MD4(UTF-16LE(password)); -EINVAL for invalid UTF-8. */
int	ntlmssp_nt_hash(const char *password, uint8_t nt_hash[16]);

/* Signing and sealing keys of both directions (MS-NLMP 3.4.5.2, 3.4.5.3). */
struct ntlmssp_keys {
	uint32_t	flags;
	uint8_t		sign_c2s[16];
	uint8_t		sign_s2c[16];
	uint8_t		seal_c2s[16];
	uint8_t		seal_s2c[16];
};

void	ntlmssp_sign_keys(const uint8_t exported_key[16], uint32_t flags,
	    struct ntlmssp_keys *out);

/*
 * NTLMSSP_MESSAGE_SIGNATURE with extended session security (MS-NLMP
 * 3.4.4.2): Version 1, HMAC-MD5 checksum (RC4-encrypted when KEY_EXCH),
 * SeqNum.  The RC4 state is fresh on every call, which is right for SPNEGO's
 * mechListMIC (the first and only use of each direction, seqnum 0) and
 * nothing else.
 */
void	ntlmssp_mac(const struct ntlmssp_keys *k, int server_to_client,
	    uint32_t seqnum, const uint8_t *data, size_t len, uint8_t sig[16]);

/* 0 when sig is the client's (or the server's) signature, else -EBADMSG. */
int	ntlmssp_mac_verify(const struct ntlmssp_keys *k, int server_to_client,
	    uint32_t seqnum, const uint8_t *data, size_t len,
	    const uint8_t *sig, size_t sig_len);

#endif
