/*
 * MS-WKST over the wkssvc pipe: NetrWkstaGetInfo (3.2.4.1) level 100,
 * which clients ask for the server's NetBIOS name and domain.
 */
#include "daemon/conf.h"
#include "worker/pipe.h"

#define WKSSVC_OPNUM_NETR_WKSTA_GET_INFO	0

#define PLATFORM_ID_NT		500
#define WKSSVC_VERSION_MAJOR	10
#define WKSSVC_VERSION_MINOR	0

#define WERR_OK			0
#define WERR_INVALID_LEVEL	124

/* The arms of LPWKSTA_INFO (MS-WKST 2.2.4.1), each a pointer. */
static int
wkssvc_info_arm(uint32_t level)
{
	static const uint16_t arms[] = {
		100, 101, 102, 502, 1010, 1011, 1012, 1013, 1018, 1023, 1027,
		1028, 1032, 1033, 1041, 1042, 1043, 1044, 1045, 1046, 1047,
		1048, 1049, 1050, 1051, 1052, 1053, 1054, 1055, 1056, 1057,
		1058, 1059, 1060, 1061, 1062,
	};
	size_t i;

	for (i = 0; i < sizeof(arms) / sizeof(arms[0]); i++)
		if (arms[i] == level)
			return 1;
	return 0;
}

static uint32_t
wkssvc_wksta_get_info(const struct pipe_env *env, struct cur *in,
    struct ndr_w *out)
{
	const struct conf *conf = env->conf;
	char server[1024];
	uint32_t level;

	/* [in] ServerName (unique string), Level */
	(void)ndr_unique_string(in, server, sizeof(server));
	level = ndr_u32(in);
	if (in->err)
		return DCERPC_FAULT_NDR;

	ndr_put_u32(out, level);		/* union discriminant */
	if (level != 100) {
		/*
		 * 101 and 102 need data (lanroot, logged-on users) we lack.
		 * At an arm of the union the answer still carries its NULL
		 * pointer: without it the stub came out four bytes short
		 * (smbtorture's NetWkstaGetInfo 101: BUFFER_TOO_SMALL).
		 */
		if (wkssvc_info_arm(level))
			ndr_put_ptr(out, 0);
		ndr_put_u32(out, WERR_INVALID_LEVEL);
		return 0;
	}
	ndr_put_ptr(out, 1);			/* WKSTA_INFO_100 */
	ndr_put_u32(out, PLATFORM_ID_NT);
	ndr_put_ptr(out, 1);			/* computername */
	ndr_put_ptr(out, 1);			/* langroup */
	ndr_put_u32(out, WKSSVC_VERSION_MAJOR);
	ndr_put_u32(out, WKSSVC_VERSION_MINOR);
	ndr_put_string(out, conf->netbios_name ? conf->netbios_name : "");
	ndr_put_string(out, conf->workgroup ? conf->workgroup : "WORKGROUP");
	ndr_put_u32(out, WERR_OK);
	return 0;
}

static uint32_t
wkssvc_call(const struct pipe_env *env, uint16_t opnum, struct cur *in,
    struct ndr_w *out)
{
	if (opnum == WKSSVC_OPNUM_NETR_WKSTA_GET_INFO)
		return wkssvc_wksta_get_info(env, in, out);
	return DCERPC_NCA_S_OP_RNG_ERROR;
}

/* MS-WKST 1.9: 6bffd098-a112-3610-9833-46c3f87e345a v1.0 */
const struct pipe_iface pipe_iface_wkssvc = {
	"wkssvc", "\\PIPE\\wkssvc",
	{ { 0x6bffd098, 0xa112, 0x3610,
	    { 0x98, 0x33, 0x46, 0xc3, 0xf8, 0x7e, 0x34, 0x5a } }, 1, 0 },
	wkssvc_call,
};
