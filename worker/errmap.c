/*
 * errno -> NTSTATUS, one table.  EXDEV and ELOOP come from openat2 refusing
 * a path that would leave the share, which Windows would call access denied.
 */
#include <errno.h>
#include <stddef.h>

#include "worker/errmap.h"

static const struct {
	int		 err;
	ntstatus_t	 status;
} errmap_table[] = {
	{ EPERM,	STATUS_ACCESS_DENIED },
	{ EACCES,	STATUS_ACCESS_DENIED },
	{ EROFS,	STATUS_MEDIA_WRITE_PROTECTED },
	{ EXDEV,	STATUS_ACCESS_DENIED },
	{ ELOOP,	STATUS_ACCESS_DENIED },
	{ ENOENT,	STATUS_OBJECT_NAME_NOT_FOUND },
	{ ENOTDIR,	STATUS_OBJECT_PATH_NOT_FOUND },
	{ EISDIR,	STATUS_FILE_IS_A_DIRECTORY },
	{ EEXIST,	STATUS_OBJECT_NAME_COLLISION },
	{ ENOTEMPTY,	STATUS_DIRECTORY_NOT_EMPTY },
	{ ENAMETOOLONG,	STATUS_OBJECT_NAME_INVALID },
	{ EILSEQ,	STATUS_OBJECT_NAME_INVALID },
	{ EINVAL,	STATUS_INVALID_PARAMETER },
	{ ENOSPC,	STATUS_DISK_FULL },
	{ EDQUOT,	STATUS_DISK_FULL },
	{ E2BIG,	STATUS_DISK_FULL },	/* xattr value past the limit */
	{ EFBIG,	STATUS_DISK_FULL },
	{ ENOMEM,	STATUS_NO_MEMORY },
	{ EMFILE,	STATUS_TOO_MANY_OPENED_FILES },
	{ ENFILE,	STATUS_TOO_MANY_OPENED_FILES },
	{ EBUSY,	STATUS_SHARING_VIOLATION },
	{ ETXTBSY,	STATUS_SHARING_VIOLATION },
	{ EBADF,	STATUS_INVALID_HANDLE },
	{ ENODATA,	STATUS_OBJECT_NAME_NOT_FOUND },
	{ EOPNOTSUPP,	STATUS_NOT_SUPPORTED },
	{ ENOSYS,	STATUS_NOT_SUPPORTED },
	{ ENOTSUP,	STATUS_NOT_SUPPORTED },
	{ EAGAIN,	STATUS_FILE_LOCK_CONFLICT },
	{ EIO,		STATUS_DATA_ERROR },
	{ ESTALE,	STATUS_FILE_CLOSED },
};

ntstatus_t
ntstatus_from_errno(int err)
{
	size_t i;

	if (err < 0)
		err = -err;
	if (err == 0)
		return STATUS_SUCCESS;
	for (i = 0; i < sizeof(errmap_table) / sizeof(errmap_table[0]); i++)
		if (errmap_table[i].err == err)
			return errmap_table[i].status;
	return STATUS_UNSUCCESSFUL;
}
