-- Repository search (GET /repos/search?q=) matches inside names, descriptions and topics
-- (LIKE '%kw%'), which no B-tree index serves: a trigram full-text index finds the candidates,
-- the search statement keeps its exact conditions. Kept in step with `repository` by triggers.
CREATE VIRTUAL TABLE `repo_search` USING fts5(`lower_name`, `description`, `topics`, tokenize = 'trigram');
--> statement-breakpoint
INSERT INTO `repo_search` (rowid, `lower_name`, `description`, `topics`) SELECT `id`, `lower_name`, `description`, `topics` FROM `repository`;
--> statement-breakpoint
CREATE TRIGGER `repo_search_insert` AFTER INSERT ON `repository` BEGIN
  INSERT INTO `repo_search` (rowid, `lower_name`, `description`, `topics`) VALUES (new.`id`, new.`lower_name`, new.`description`, new.`topics`);
END;
--> statement-breakpoint
CREATE TRIGGER `repo_search_update` AFTER UPDATE OF `lower_name`, `description`, `topics` ON `repository`
  WHEN old.`lower_name` IS NOT new.`lower_name` OR old.`description` IS NOT new.`description` OR old.`topics` IS NOT new.`topics` BEGIN
  UPDATE `repo_search` SET `lower_name` = new.`lower_name`, `description` = new.`description`, `topics` = new.`topics` WHERE rowid = new.`id`;
END;
--> statement-breakpoint
CREATE TRIGGER `repo_search_delete` AFTER DELETE ON `repository` BEGIN
  DELETE FROM `repo_search` WHERE rowid = old.`id`;
END;
