/*
 * What QUERY_INFO (worker/smb2_info.c) and SET_INFO (worker/smb2_setinfo.c)
 * share: the InfoType codes and one scratch buffer.
 */
#ifndef USMBD_WORKER_SMB2_INFO_PRIV_H
#define USMBD_WORKER_SMB2_INFO_PRIV_H

/* MS-SMB2 2.2.37 InfoType */
#define SMB2_0_INFO_FILE	0x01
#define SMB2_0_INFO_FILESYSTEM	0x02
#define SMB2_0_INFO_SECURITY	0x03
#define SMB2_0_INFO_QUOTA	0x04

/*
 * 64 KiB of scratch, allocated once: xattr name listings (QUERY_INFO)
 * and a stream's value (SET_INFO), never both at once.
 */
extern char	info_xattrs[65536];

#endif
