#include "textflag.h"

// func vforkExec(path, argv, envp, rec uintptr) (pid, errno uintptr)
//
// Starts the command from the sandbox's PID 1: clone(CLONE_VM|CLONE_VFORK|
// SIGCHLD) on the caller's stack, then execve in the child. PID 1 is
// suspended until the child has exec'd or exited, and the child executes
// only system calls from registers, never touching the shared stack, so no
// copy of PID 1's page tables is made (fork_linux.go). When execve fails
// the child writes a setup record {recSetup, stepExec, errno, 0} at rec,
// sends its 16 bytes on fdStatus and exits 127.
TEXT ·vforkExec(SB),NOSPLIT,$0-48
	// Kept across clone, which reads only DI, SI, DX, R10 and R8 (and
	// SYSCALL clobbers only CX and R11).
	MOVQ path+0(FP), R12
	MOVQ argv+8(FP), R13
	MOVQ envp+16(FP), BX
	MOVQ rec+24(FP), R9
	MOVQ $0x4111, DI // CLONE_VM|CLONE_VFORK|SIGCHLD
	XORQ SI, SI      // same stack
	XORQ DX, DX
	XORQ R10, R10
	XORQ R8, R8
	MOVQ $56, AX     // SYS_clone
	SYSCALL
	CMPQ AX, $0
	JEQ child
	CMPQ AX, $0xfffffffffffff001
	JLS ok
	NEGQ AX
	MOVQ $0, pid+32(FP)
	MOVQ AX, errno+40(FP)
	RET
ok:
	MOVQ AX, pid+32(FP)
	MOVQ $0, errno+40(FP)
	RET
child:
	MOVQ R12, DI
	MOVQ R13, SI
	MOVQ BX, DX
	MOVQ $59, AX     // SYS_execve
	SYSCALL
	NEGQ AX
	MOVL $1, 0(R9)          // recSetup
	MOVL $0x100004, 4(R9)   // stepExec
	MOVL AX, 8(R9)
	MOVL $0, 12(R9)
	MOVQ $1, AX      // SYS_write
	MOVQ $3, DI      // fdStatus
	MOVQ R9, SI
	MOVQ $16, DX
	SYSCALL
exit:
	MOVQ $127, DI
	MOVQ $60, AX     // SYS_exit
	SYSCALL
	JMP exit
