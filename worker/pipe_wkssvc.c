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
		/* 101 and 102 need data (lanroot, logged-on users) we lack. */
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
