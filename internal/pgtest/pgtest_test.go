package pgtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

func TestMain(m *testing.M) { os.Exit(Main(m)) }

func TestDatabasesAreFreshAndSurviveARestart(t *testing.T) {
	c := Start(t)
	ctx := context.Background()
	dsn := c.NewDSN(t)
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `CREATE TABLE t (v int); INSERT INTO t VALUES (7)`); err != nil {
		t.Fatal(err)
	}
	conn.Close(ctx)
	c.Kill()
	if _, err := pgx.Connect(ctx, dsn); err == nil {
		t.Fatal("connected to a killed server")
	}
	if err := c.Restart(); err != nil {
		t.Fatal(err)
	}
	conn, err = pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var v int
	if err := conn.QueryRow(ctx, `SELECT v FROM t`).Scan(&v); err != nil || v != 7 {
		t.Fatalf("after a restart: %d, %v; want 7", v, err)
	}
	other, err := pgx.Connect(ctx, c.NewDSN(t))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close(ctx)
	if _, err := other.Exec(ctx, `SELECT 1 FROM t`); err == nil {
		t.Fatal("a new database holds another's table")
	}
}

func TestPasswordRole(t *testing.T) {
	c := Start(t)
	ctx := context.Background()
	db := c.NewDatabase(t)
	conn, err := pgx.Connect(ctx, c.TCPDSN(db, PasswordRole, PasswordRolePassword))
	if err != nil {
		t.Fatalf("the right password: %v", err)
	}
	conn.Close(ctx)
	if conn, err := pgx.Connect(ctx, c.TCPDSN(db, PasswordRole, "wrong")); err == nil {
		conn.Close(ctx)
		t.Fatal("a wrong password connected")
	}
}

func setting(t *testing.T, dsn, name string) string {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var v string
	if err := conn.QueryRow(ctx, "SELECT current_setting($1)", name).Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// TestNewDurable: a cluster of New, as a program starts one to measure,
// commits to the disk (the tests' does not), and Close stops it.
func TestNewDurable(t *testing.T) {
	shared := Start(t) // skips without the binaries
	if v := setting(t, shared.DSN("postgres"), "fsync"); v != "off" {
		t.Errorf("the tests' cluster: fsync %s, want off", v)
	}
	c, err := New(Options{Durable: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	db, err := c.CreateDatabase()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"fsync", "full_page_writes", "synchronous_commit"} {
		if v := setting(t, c.DSN(db), name); v != "on" {
			t.Errorf("durable cluster: %s %s, want on", name, v)
		}
	}
	pid := c.PID()
	if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); pid <= 0 || err != nil {
		t.Errorf("PID %d: %v", pid, err)
	}
	c.Close()
	if _, err := os.Stat(c.Dir); !errors.Is(err, os.ErrNotExist) || c.PID() != 0 {
		t.Errorf("after Close: folder %v, PID %d", err, c.PID())
	}
	if _, err := pgx.Connect(context.Background(), c.DSN(db)); err == nil {
		t.Error("connected to a closed cluster")
	}
}

func TestBinDirChecksTheVariable(t *testing.T) {
	t.Setenv("PRICKLE_PG_BINDIR", t.TempDir())
	if _, err := BinDir(); err == nil || !strings.Contains(err.Error(), "no initdb there") {
		t.Errorf("PRICKLE_PG_BINDIR without initdb: %v", err)
	}
	if _, err := New(Options{}); err == nil || !strings.Contains(err.Error(), "PRICKLE_PG_BINDIR") {
		t.Errorf("New: %v, want the variable named", err)
	}
}
