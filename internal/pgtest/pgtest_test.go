package pgtest

import (
	"context"
	"os"
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
