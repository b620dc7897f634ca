//go:build !unix

package secret

// nonBlock is 0 where FIFOs do not block an open this way.
const nonBlock = 0
