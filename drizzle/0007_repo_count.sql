CREATE TABLE `repo_count` (
	`vis` integer NOT NULL,
	`is_private` integer NOT NULL,
	`is_fork` integer NOT NULL,
	`is_mirror` integer NOT NULL,
	`is_template` integer NOT NULL,
	`is_archived` integer NOT NULL,
	`n` integer NOT NULL,
	PRIMARY KEY(`vis`, `is_private`, `is_fork`, `is_mirror`, `is_template`, `is_archived`)
);
--> statement-breakpoint
-- The count by class is kept by triggers, so no write path can forget it: a repository counts in
-- the class of its owner's visibility (-1 while no owner row exists) and of its own flags.
INSERT INTO `repo_count` (`vis`, `is_private`, `is_fork`, `is_mirror`, `is_template`, `is_archived`, `n`)
  SELECT COALESCE(u.`visibility`, -1), r.`is_private`, r.`is_fork`, r.`is_mirror`, r.`is_template`, r.`is_archived`, COUNT(*)
  FROM `repository` r LEFT JOIN `user` u ON u.`id` = r.`owner_id` WHERE 1
  GROUP BY 1, 2, 3, 4, 5, 6;
--> statement-breakpoint
CREATE TRIGGER `repo_count_insert` AFTER INSERT ON `repository` BEGIN
  INSERT INTO `repo_count` (`vis`, `is_private`, `is_fork`, `is_mirror`, `is_template`, `is_archived`, `n`)
    VALUES (COALESCE((SELECT `visibility` FROM `user` WHERE `id` = new.`owner_id`), -1), new.`is_private`, new.`is_fork`, new.`is_mirror`, new.`is_template`, new.`is_archived`, 1)
    ON CONFLICT DO UPDATE SET `n` = `n` + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `repo_count_delete` AFTER DELETE ON `repository` BEGIN
  UPDATE `repo_count` SET `n` = `n` - 1
    WHERE `vis` = COALESCE((SELECT `visibility` FROM `user` WHERE `id` = old.`owner_id`), -1) AND `is_private` = old.`is_private`
      AND `is_fork` = old.`is_fork` AND `is_mirror` = old.`is_mirror` AND `is_template` = old.`is_template` AND `is_archived` = old.`is_archived`;
END;
--> statement-breakpoint
CREATE TRIGGER `repo_count_update` AFTER UPDATE OF `owner_id`, `is_private`, `is_fork`, `is_mirror`, `is_template`, `is_archived` ON `repository`
  WHEN (old.`owner_id`, old.`is_private`, old.`is_fork`, old.`is_mirror`, old.`is_template`, old.`is_archived`)
    IS NOT (new.`owner_id`, new.`is_private`, new.`is_fork`, new.`is_mirror`, new.`is_template`, new.`is_archived`) BEGIN
  UPDATE `repo_count` SET `n` = `n` - 1
    WHERE `vis` = COALESCE((SELECT `visibility` FROM `user` WHERE `id` = old.`owner_id`), -1) AND `is_private` = old.`is_private`
      AND `is_fork` = old.`is_fork` AND `is_mirror` = old.`is_mirror` AND `is_template` = old.`is_template` AND `is_archived` = old.`is_archived`;
  INSERT INTO `repo_count` (`vis`, `is_private`, `is_fork`, `is_mirror`, `is_template`, `is_archived`, `n`)
    VALUES (COALESCE((SELECT `visibility` FROM `user` WHERE `id` = new.`owner_id`), -1), new.`is_private`, new.`is_fork`, new.`is_mirror`, new.`is_template`, new.`is_archived`, 1)
    ON CONFLICT DO UPDATE SET `n` = `n` + 1;
END;
--> statement-breakpoint
-- An owner's repositories move with the owner: into its class when its row appears, between
-- classes when its visibility changes, and to -1 when its row goes (repositories deleted after
-- their owner then leave -1).
CREATE TRIGGER `repo_count_owner_insert` AFTER INSERT ON `user` BEGIN
  INSERT INTO `repo_count` (`vis`, `is_private`, `is_fork`, `is_mirror`, `is_template`, `is_archived`, `n`)
    SELECT v.`vis`, r.`is_private`, r.`is_fork`, r.`is_mirror`, r.`is_template`, r.`is_archived`, v.`sign` * COUNT(*)
    FROM `repository` r JOIN (SELECT -1 AS `vis`, -1 AS `sign` UNION ALL SELECT new.`visibility`, 1) v
    WHERE r.`owner_id` = new.`id` GROUP BY 1, 2, 3, 4, 5, 6
    ON CONFLICT DO UPDATE SET `n` = `n` + excluded.`n`;
END;
--> statement-breakpoint
CREATE TRIGGER `repo_count_owner_visibility` AFTER UPDATE OF `visibility` ON `user` WHEN old.`visibility` IS NOT new.`visibility` BEGIN
  INSERT INTO `repo_count` (`vis`, `is_private`, `is_fork`, `is_mirror`, `is_template`, `is_archived`, `n`)
    SELECT v.`vis`, r.`is_private`, r.`is_fork`, r.`is_mirror`, r.`is_template`, r.`is_archived`, v.`sign` * COUNT(*)
    FROM `repository` r JOIN (SELECT old.`visibility` AS `vis`, -1 AS `sign` UNION ALL SELECT new.`visibility`, 1) v
    WHERE r.`owner_id` = new.`id` GROUP BY 1, 2, 3, 4, 5, 6
    ON CONFLICT DO UPDATE SET `n` = `n` + excluded.`n`;
END;
--> statement-breakpoint
CREATE TRIGGER `repo_count_owner_delete` AFTER DELETE ON `user` BEGIN
  INSERT INTO `repo_count` (`vis`, `is_private`, `is_fork`, `is_mirror`, `is_template`, `is_archived`, `n`)
    SELECT v.`vis`, r.`is_private`, r.`is_fork`, r.`is_mirror`, r.`is_template`, r.`is_archived`, v.`sign` * COUNT(*)
    FROM `repository` r JOIN (SELECT old.`visibility` AS `vis`, -1 AS `sign` UNION ALL SELECT -1, 1) v
    WHERE r.`owner_id` = old.`id` GROUP BY 1, 2, 3, 4, 5, 6
    ON CONFLICT DO UPDATE SET `n` = `n` + excluded.`n`;
END;
