/*
 * SMB2 protocol constants every layer that speaks SMB2 shares: the header
 * length, the command codes and the header flags (MS-SMB2 2.2.1).  The
 * codecs in proto/ and the handlers in worker/ take them from here.
 */
#ifndef USMBD_PROTO_SMB2_H
#define USMBD_PROTO_SMB2_H

#define SMB2_HDR_LEN		64

/* MS-SMB2 2.2.1 commands */
#define SMB2_NEGOTIATE		0x0000
#define SMB2_SESSION_SETUP	0x0001
#define SMB2_LOGOFF		0x0002
#define SMB2_TREE_CONNECT	0x0003
#define SMB2_TREE_DISCONNECT	0x0004
#define SMB2_CREATE		0x0005
#define SMB2_CLOSE		0x0006
#define SMB2_FLUSH		0x0007
#define SMB2_READ		0x0008
#define SMB2_WRITE		0x0009
#define SMB2_LOCK		0x000A
#define SMB2_IOCTL		0x000B
#define SMB2_CANCEL		0x000C
#define SMB2_ECHO		0x000D
#define SMB2_QUERY_DIRECTORY	0x000E
#define SMB2_CHANGE_NOTIFY	0x000F
#define SMB2_QUERY_INFO		0x0010
#define SMB2_SET_INFO		0x0011
#define SMB2_OPLOCK_BREAK	0x0012
#define SMB2_NCOMMANDS		0x0013

/* MS-SMB2 2.2.1.2 header flags */
#define SMB2_FLAGS_SERVER_TO_REDIR	0x00000001u
#define SMB2_FLAGS_ASYNC_COMMAND	0x00000002u
#define SMB2_FLAGS_RELATED_OPERATIONS	0x00000004u
#define SMB2_FLAGS_SIGNED		0x00000008u
#define SMB2_FLAGS_PRIORITY_MASK	0x00000070u
#define SMB2_FLAGS_DFS_OPERATIONS	0x10000000u
#define SMB2_FLAGS_REPLAY_OPERATION	0x20000000u

#endif
