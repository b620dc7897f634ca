//go:build linux

package job

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestRecoverEndsSurvivingTree (issue 16 scope 6): a job whose supervisor
// died while a process of its sandbox survived (here: a real process in
// its own mount namespace holding the job's candidate overlay, which is
// how a sandbox member looks from outside) is failed on Open only after
// that process is killed and verified gone; a job with no survivor is
// failed job.supervisor_gone as before.
func TestRecoverEndsSurvivingTree(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state.db")
	s, db := openAt(t, path)
	id := createDead(t, s)
	db.Close()

	dir := t.TempDir()
	for _, d := range []string{"lower", id + "/upper", "work", "merged"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	opts := "lowerdir=" + dir + "/lower,upperdir=" + dir + "/" + id + "/upper,workdir=" + dir + "/work,userxattr"
	cmd := exec.Command("unshare", "-r", "-m", "--propagation", "private", "sh", "-c",
		"mount -t overlay overlay -o "+opts+" "+dir+"/merged && exec sleep 120")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	for deadline := time.Now().Add(30 * time.Second); len(treeProcs(id)) == 0; time.Sleep(20 * time.Millisecond) {
		select {
		case err := <-exited:
			t.Fatalf("the survivor could not mount its overlay: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("the survivor's overlay never showed in /proc")
		}
	}

	s2, db2 := openAt(t, path)
	defer db2.Close()
	j, err := s2.Get(ctx, id)
	if err != nil || j.State != Failed || j.Reason != ReasonSupervisorGone {
		t.Errorf("job after recovery = %v %q, %v; want failed %s", j.State, j.Reason, err, ReasonSupervisorGone)
	}
	if left := treeProcs(id); len(left) != 0 {
		t.Errorf("survivors after recovery: %v", left)
	}
	select {
	case err = <-exited:
	case <-time.After(30 * time.Second):
		t.Fatal("the survivor is still running after recovery")
	}
	if ee, ok := err.(*exec.ExitError); !ok || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Errorf("survivor ended with %v, want killed by recovery", err)
	}
}
